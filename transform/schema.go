// Package transform turns the raw files of an extract into typed rows in
// DuckDB: it matches columns by header name, validates every value, sends bad
// rows to quarantine with their line and reason, and replaces each source
// slice inside one transaction.
package transform

import (
	"strings"

	"recon/extract"
)

// Kind says how a column's text is parsed and validated.
type Kind int

// Column kinds.
const (
	Text     Kind = iota // kept as is
	Amount               // DECIMAL(38,12)
	Time                 // TIMESTAMPTZ, ISO 8601
	Currency             // upper-cased code
	Enum                 // one of Column.Values
)

// AmountType is the DuckDB type of every amount and rate.
const AmountType = "DECIMAL(38,12)"

// Column is one known column of a source table.
type Column struct {
	Name     string
	Kind     Kind
	Values   []string // Enum only
	Required bool     // an empty value sends the row to quarantine
}

// Table describes how one report type lands in DuckDB.
type Table struct {
	Name       string   // DuckDB table
	Source     string   // extract.Source* value
	Columns    []Column // known columns, in table order
	Key        []string // natural key: a reload replaces rows with the same key
	WindowTime string   // column the provider selects report rows by
}

// Enumerations from the spec and DESIGN.md §3.
var (
	paymentStates = []string{"ACCEPTED", "AWAITING_COLLECTION", "COMPLETED", "EXECUTED", "FAILED",
		"FORWARDED", "LOCK_DECLINED", "LOCKED", "PREPARED", "RETURNED", "SETTLEMENT_DECLINED"}
	transactionTypes  = []string{"CRYPTO_TRANSFER", "FIAT_TRANSFER", "TRADE"}
	transactionStates = []string{"COMPLETED", "COMPLETE", "EXECUTED", "FAILED"}
)

func text(names ...string) []Column {
	cs := make([]Column, len(names))
	for i, n := range names {
		cs[i] = Column{Name: n, Kind: Text}
	}
	return cs
}

func cols(groups ...[]Column) []Column {
	var out []Column
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func one(name string, k Kind) []Column { return []Column{{Name: name, Kind: k}} }

var paymentID = []Column{{Name: "network_payment_id", Kind: Text, Required: true}}

// PaymentOps is the PAYMENT_OPS report: the spec's field list, in order.
var PaymentOps = Table{
	Name: "payment_ops", Source: extract.SourcePaymentOps,
	Columns: cols(
		text("end_to_end_id"), paymentID,
		one("quote_ts", Time), one("created_at", Time), one("executed_at", Time),
		text("sender_address", "sender_customer"), one("sent_amount", Amount), one("sent_currency", Currency),
		one("withdrawal_result_amount", Amount),
		text("receiver_address", "receiver_customer"), one("received_amount", Amount), one("received_currency", Currency),
		one("fx_spot_rate", Amount),
		text("source_exchange", "destination_exchange", "payment_method"),
		[]Column{{Name: "payment_state", Kind: Enum, Values: paymentStates}},
		text("remitter_name", "remitter_account", "beneficiary_name", "beneficiary_account", "payment_batch_id"),
	),
	Key:        []string{"network_payment_id"},
	WindowTime: "quote_ts",
}

// Recon is the RECON report: one row per transaction of a payment.
var Recon = Table{
	Name: "recon_transactions", Source: extract.SourceRecon,
	Columns: cols(
		text("end_to_end_id"), paymentID,
		[]Column{{Name: "payment_state", Kind: Enum, Values: paymentStates}},
		text("internal_payment_state"),
		one("quote_ts", Time), one("executed_at", Time),
		text("sender_address", "sender_customer"), one("sent_amount", Amount), one("sent_currency", Currency),
		text("receiver_address", "receiver_customer"), one("received_amount", Amount), one("received_currency", Currency),
		one("fx_spot_rate", Amount),
		text("source_exchange", "destination_exchange", "payment_method", "transaction_id"),
		[]Column{
			{Name: "transaction_type", Kind: Enum, Values: transactionTypes},
			{Name: "transaction_state", Kind: Enum, Values: transactionStates},
		},
		text("venue_id"),
		one("source_result_amount", Amount), one("source_result_adjusted_amount", Amount),
		one("source_result_proceeds", Amount), one("source_result_adjusted_proceeds", Amount),
		text("withdrawal_result_id", "withdrawal_result_details_transaction_id"),
		one("withdrawal_result_amount", Amount), one("withdrawal_result_fee_amount", Amount),
		one("withdrawal_result_incentive_value", Amount),
		text("deposit_result_id"), one("deposit_result_amount", Amount), one("deposit_result_fee_amount", Amount),
		one("balance_change_currency", Currency), one("balance_change", Amount), one("balance_result", Amount),
		text("destination_result_id"),
		one("destination_result_amount", Amount), one("destination_result_adjusted_amount", Amount),
		one("destination_result_incentive_value", Amount), one("destination_result_proceeds", Amount),
		one("destination_result_adjusted_proceeds", Amount),
		text("liquidation_status", "liquidation_trade_request_status", "payment_batch_id"),
	),
	Key:        []string{"network_payment_id", "transaction_id"},
	WindowTime: "quote_ts",
}

// FailureConversion is the FAILURE_CONVERSION_SSA report.
var FailureConversion = Table{
	Name: "failure_conversions", Source: extract.SourceFailureConversion,
	Columns: cols(
		text("end_to_end_id"), paymentID,
		text("execution_result_type"), one("execution_timestamp", Time),
		one("fiat_adjusted_value", Amount), one("fx_rate", Amount), one("intermediary_delta", Amount),
		[]Column{{Name: "payment_state", Kind: Enum, Values: paymentStates}},
		one("sent_amount", Amount), one("sent_currency", Currency),
		one("received_amount", Amount), one("received_currency", Currency),
		one("transfer_currency", Currency),
		text("venue_id", "ssa_account", "sender_customer", "ssa_remote_transfer_id"),
		one("ssa_transfer_amount", Amount), one("ssa_balance_change", Amount), one("ssa_balance_result", Amount),
		one("ssa_transfer_currency", Currency), text("ssa_transfer_state"),
	),
	Key:        []string{"network_payment_id", "ssa_remote_transfer_id"},
	WindowTime: "execution_timestamp",
}

// Tables lists every report table.
var Tables = []*Table{&PaymentOps, &Recon, &FailureConversion}

// TableFor returns the table of a raw file's source.
func TableFor(source string) (*Table, bool) {
	for _, t := range Tables {
		if t.Source == source {
			return t, true
		}
	}
	return nil, false
}

// Canonical maps a header to the table's column name: names are matched case
// and space insensitively, and the provider's ripplenet_ prefix is accepted
// for network_ (ripplenet_payment_id) or for no prefix
// (ripplenet_sender_address). ok is false for a column the table lacks.
func (t *Table) Canonical(header string) (name string, ok bool) {
	h := strings.ToLower(strings.TrimSpace(header))
	cands := []string{h}
	if rest, found := strings.CutPrefix(h, "ripplenet_"); found {
		cands = append(cands, "network_"+rest, rest)
	}
	for _, c := range cands {
		if t.column(c) != nil {
			return c, true
		}
	}
	return h, false
}

func (t *Table) column(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

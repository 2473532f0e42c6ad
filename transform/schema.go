// Package transform turns the raw files of an extract into typed rows in
// DuckDB. Every format (CSV and JSON reports, JSON pages and documents) goes
// through one path: fields matched by name, each value parsed and validated
// in Go by its column's kind into typed Arrow record batches, bad rows sent to
// quarantine with their line and reason, and each source slice replaced
// inside one transaction.
package transform

import (
	"strings"

	"recon/extract/raw"
)

// Kind says how a column's value is parsed and validated.
type Kind int

// Column kinds.
const (
	Text     Kind = iota // kept as is (a JSON object or array is kept as its text)
	Amount               // DECIMAL(38,12): a plain or exponent decimal with at most 12 decimals
	Time                 // TIMESTAMPTZ: ISO 8601, UTC unless an offset is given
	Currency             // code, trimmed and upper-cased
	Enum                 // an open list: trimmed and kept verbatim; Column.Values are the values known (KnownValues)
	Bool                 // true or false
	Labels               // VARCHAR[]: a JSON array of strings or of {"label": ...} objects
	Quantity             // DECIMAL(38,18): a plain or exponent decimal with at most 18 decimals (wallet quantities)
)

// Column is one known column of a table.
type Column struct {
	Name     string
	Kind     Kind
	Values   []string // Enum only: the values known; any other loads and is counted in unknown_values
	Required bool     // a null or blank value sends the row to quarantine
	Tracked  bool     // reports: a change between generations is recorded
}

// Provenance says which provenance columns follow a table's data columns.
type Provenance int

// Provenance families.
const (
	ByReport Provenance = iota // report_id, source_file, source_line
	ByRun                      // source_file, source_line, run_id
)

// Table describes how one source lands in one DuckDB table.
type Table struct {
	Name       string   // DuckDB table
	Source     string   // extract.Source* value
	Columns    []Column // data columns, in table order
	Extra      bool     // an extra JSON column keeps fields the table does not know
	Prov       Provenance
	Key        []string // natural key: a reload replaces rows with the same key
	Payment    string   // the column holding a payment id, kept with a quarantined row ("" none)
	WindowTime string   // reports: the column the provider selects rows by
	Keep       string   // ORDER BY that picks the row kept when a load brings a key twice ("" keeps all)
	Whole      bool     // a load replaces the whole table, not the rows of its keys (a snapshot: fees, the label sweep)
}

// Enumerations from the spec, DESIGN.md §3 and the brief's choices: the
// values known. The spec calls the full lists "not shown", so they are open:
// a value outside its list loads as received and is counted per run in
// unknown_values (see KnownValues); the rules treat it as no known state.
var (
	paymentStates = []string{"ACCEPTED", "AWAITING_COLLECTION", "COMPLETED", "EXECUTED", "FAILED",
		"FORWARDED", "LOCK_DECLINED", "LOCKED", "PREPARED", "RETURNED", "SETTLEMENT_DECLINED"}
	transactionTypes   = []string{"CRYPTO_TRANSFER", "FIAT_TRANSFER", "TRADE"}
	transactionStates  = []string{"COMPLETED", "COMPLETE", "EXECUTED", "FAILED"}
	statementTypes     = []string{"PAYMENT", "TRANSFER", "EXCHANGE_TRANSFER"}
	liquidationStates  = []string{"CREATED", "QUEUED", "STARTED", "COMPLETED", "PARTIALLY_COMPLETED", "FAILED"}
	executionStates    = []string{"EXECUTED", "FAILED"}
	paymentTypes       = []string{"REGULAR", "RETURN"}
	connectorRoles     = []string{"SENDING", "RECEIVING", "INTERMEDIARY", "INTERNAL"}
	feeRoleTypes       = []string{"SENDING", "RECEIVING", "INSTITUTION_SENDING", "INSTITUTION_RECEIVING"}
	feeNodeTypes       = []string{"INITIAL", "INTERMEDIATE", "TERMINAL"}
	feeTypes           = []string{"PERCENTAGE", "FLAT_RATE"}
	feeCategories      = []string{"NONE", "OVERSEAS_DELIVERY_CHARGES", "BENEFICIARY_BANK_CHARGE", "PROCESSING_HANDLING_CHARGE", "LOCAL_GOVERNMENT_CHARGE", "OTHER"}
	balanceSides       = []string{"local", "remote", "error"}
	reportTrackedTexts = []string{"internal_payment_state", "liquidation_status", "liquidation_trade_request_status", "ssa_transfer_state"}
)

func text(names ...string) []Column {
	cs := make([]Column, len(names))
	for i, n := range names {
		cs[i] = Column{Name: n, Kind: Text}
	}
	return cs
}

func one(name string, k Kind) []Column { return []Column{{Name: name, Kind: k}} }

func enum(name string, values []string) []Column {
	return []Column{{Name: name, Kind: Enum, Values: values}}
}

func required(name string) []Column { return []Column{{Name: name, Kind: Text, Required: true}} }

func cols(groups ...[]Column) []Column {
	var out []Column
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// report marks the columns whose change between generations is recorded:
// amounts, currencies and states.
func report(cs []Column) []Column {
	for i := range cs {
		switch cs[i].Kind {
		case Amount, Currency, Enum:
			cs[i].Tracked = true
		default:
			cs[i].Tracked = contains(reportTrackedTexts, cs[i].Name)
		}
	}
	return cs
}

var paymentID = required("network_payment_id")

// PaymentOps is the PAYMENT_OPS report: the spec's field list, in order.
var PaymentOps = Table{
	Name: "payment_ops", Source: raw.SourcePaymentOps, Extra: true, Prov: ByReport, Payment: "network_payment_id",
	Columns: report(cols(
		text("end_to_end_id"), paymentID,
		one("quote_ts", Time), one("created_at", Time), one("executed_at", Time),
		text("sender_address", "sender_customer"), one("sent_amount", Amount), one("sent_currency", Currency),
		one("withdrawal_result_amount", Amount),
		text("receiver_address", "receiver_customer"), one("received_amount", Amount), one("received_currency", Currency),
		one("fx_spot_rate", Amount),
		text("source_exchange", "destination_exchange", "payment_method"),
		enum("payment_state", paymentStates),
		text("remitter_name", "remitter_account", "beneficiary_name", "beneficiary_account", "payment_batch_id"),
	)),
	Key:        []string{"network_payment_id"},
	WindowTime: "quote_ts",
}

// Recon is the RECON report: one row per transaction of a payment.
var Recon = Table{
	Name: "recon_transactions", Source: raw.SourceRecon, Extra: true, Prov: ByReport, Payment: "network_payment_id",
	Columns: report(cols(
		text("end_to_end_id"), paymentID,
		enum("payment_state", paymentStates),
		text("internal_payment_state"),
		one("quote_ts", Time), one("executed_at", Time),
		text("sender_address", "sender_customer"), one("sent_amount", Amount), one("sent_currency", Currency),
		text("receiver_address", "receiver_customer"), one("received_amount", Amount), one("received_currency", Currency),
		one("fx_spot_rate", Amount),
		text("source_exchange", "destination_exchange", "payment_method", "transaction_id"),
		enum("transaction_type", transactionTypes), enum("transaction_state", transactionStates),
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
	)),
	Key:        []string{"network_payment_id", "transaction_id"},
	WindowTime: "quote_ts",
}

// FailureConversion is the FAILURE_CONVERSION_SSA report.
var FailureConversion = Table{
	Name: "failure_conversions", Source: raw.SourceFailureConversion, Extra: true, Prov: ByReport, Payment: "network_payment_id",
	Columns: report(cols(
		text("end_to_end_id"), paymentID,
		text("execution_result_type"), one("execution_timestamp", Time),
		one("fiat_adjusted_value", Amount), one("fx_rate", Amount), one("intermediary_delta", Amount),
		enum("payment_state", paymentStates),
		one("sent_amount", Amount), one("sent_currency", Currency),
		one("received_amount", Amount), one("received_currency", Currency),
		one("transfer_currency", Currency),
		text("venue_id", "ssa_account", "sender_customer", "ssa_remote_transfer_id"),
		one("ssa_transfer_amount", Amount), one("ssa_balance_change", Amount), one("ssa_balance_result", Amount),
		one("ssa_transfer_currency", Currency), text("ssa_transfer_state"),
	)),
	Key:        []string{"network_payment_id", "ssa_remote_transfer_id"},
	WindowTime: "execution_timestamp",
}

// StatementEntries are the entries of a ledger statement page.
var StatementEntries = Table{
	Name: "statement_entries", Source: raw.SourceStatement, Prov: ByRun, Payment: "transaction_id",
	Columns: cols(
		required("account"), required("transaction_id"),
		enum("transaction_type", statementTypes), text("transaction_state"),
		one("balance_change", Amount), one("balance_result", Amount), one("created_at", Time),
		text("end_to_end_id", "internal_id", "venue_id", "transaction_hash", "returns_payment_with_id",
			"returned_by_payment_with_id", "sender_address", "receiver_address"),
	),
	Key:  []string{"transaction_id", "account"},
	Keep: "_file, _line",
}

// Liquidations, LiquidationTrades and TradeExecutions are one liquidation
// detail (GET /liquidations/{id}) flattened.
var (
	Liquidations = Table{
		Name: "liquidations", Source: raw.SourceLiquidation, Extra: true, Prov: ByRun, Payment: "network_payment_id",
		Columns: cols(
			required("liquidation_id"), text("account_id"),
			one("created_at", Time), one("modified_at", Time),
			text("unique_reference_id", "network_payment_id"), one("network_payment_created_at", Time),
			text("network_sender_address", "network_receiver_address"),
			one("destination_amount", Amount), one("destination_currency", Currency),
			text("destination_venue", "estimate_type"), one("expires_at", Time), text("liquidation_source"),
			enum("status", liquidationStates),
			one("execution_strategy_max_amount_per_trade", Amount), one("execution_strategy_minimum_trade_interval", Amount),
			one("execution_summary_total_xrp", Amount), one("execution_summary_total_fiat", Amount),
			one("execution_summary_total_slippage", Amount), one("execution_summary_total_sender_fees", Amount),
			one("execution_summary_total_receiver_fees", Amount), one("execution_summary_total_trades", Amount),
			one("execution_summary_fx_rate", Amount), text("execution_summary_incentive_type"),
			one("trading_summary_total_fiat_executed", Amount), one("trading_summary_total_fiat_in_flight", Amount),
			one("trading_summary_total_fiat_non_deliverable", Amount),
			one("trading_summary_total_fiat_remaining_deliverable", Amount),
		),
		Key:  []string{"liquidation_id"},
		Keep: "_file, _line",
	}
	LiquidationTrades = Table{
		Name: "liquidation_trades", Source: raw.SourceLiquidation, Extra: true, Prov: ByRun,
		Columns: cols(
			required("liquidation_id"), required("trade_id"),
			one("created_at", Time), one("modified_at", Time), enum("status", liquidationStates),
			one("amount", Amount), one("destination_currency", Currency), text("trade_exchange"),
			one("expires_at", Time), one("fiat_available_after_failure", Bool),
		),
		Key: []string{"liquidation_id"},
	}
	TradeExecutions = Table{
		Name: "trade_executions", Source: raw.SourceLiquidation, Extra: true, Prov: ByRun,
		Columns: cols(
			required("liquidation_id"), required("trade_id"), required("execution_id"),
			one("executed_at", Time), enum("status", executionStates),
			one("source_amount", Amount), one("source_currency", Currency),
			one("destination_amount", Amount), one("destination_currency", Currency),
			one("rate", Amount), one("fee", Amount),
		),
		Key: []string{"liquidation_id"},
	}
)

// Payments is the server API's view of payments (GET /v4/payments).
var Payments = Table{
	Name: "payments", Source: raw.SourcePayment, Prov: ByRun, Payment: "payment_id",
	Columns: cols(
		required("payment_id"), enum("payment_state", paymentStates), enum("payment_type", paymentTypes),
		text("end_to_end_id", "contract_hash"),
		one("created_at", Time), one("expires_at", Time), one("accepted_at", Time), one("locked_at", Time),
		one("executed_at", Time), one("completed_at", Time), one("returned_at", Time), one("modified_at", Time),
		enum("connector_role", connectorRoles), text("internal_id"), one("labels", Labels),
		text("quote_id", "quote_type"), one("quote_amount", Amount), one("quote_currency", Currency),
		text("sender_address", "receiver_address", "payment_method", "returns_payment_with_id",
			"returned_by_payment_with_id", "crypto_transaction_id", "liquidation_id", "liquidation_status",
			"liquidation_failure_reason", "fee_nodes"),
		one("fee_totals_differ", Bool),
	),
	Extra: true,
	Key:   []string{"payment_id"},
	Keep:  "modified_at DESC NULLS LAST, _file DESC, _line DESC",
}

// Transfers are the server API's transfers (GET /v4/transfers).
var Transfers = Table{
	Name: "transfers", Source: raw.SourceTransfer, Extra: true, Prov: ByRun,
	Columns: cols(
		required("transfer_id"), text("state", "owner_address", "sender_address", "receiver_address"),
		one("amount", Amount), one("sending_fee", Amount), text("internal_id", "end_to_end_id"),
		one("created_at", Time), one("labels", Labels),
	),
	Key:  []string{"transfer_id"},
	Keep: "_file, _line",
}

// Balances is one balances snapshot (GET /v4/monitor/balances) flattened to
// one row per account balance.
var Balances = Table{
	Name: "balances", Source: raw.SourceBalance, Extra: true, Prov: ByRun,
	Columns: cols(
		[]Column{{Name: "fetched_at", Kind: Time, Required: true}}, enum("side", balanceSides), text("institution"),
		one("currency", Currency), one("aggregate_balance", Amount),
		text("account_name"), one("account_currency", Currency), one("balance", Amount), text("owner"),
		one("minimum_allowed_balance", Amount),
	),
	Key: []string{"fetched_at"},
}

// Fees is the fee configuration (GET /v4/config/fees).
var Fees = Table{
	Name: "fees", Source: raw.SourceFee, Prov: ByRun,
	Columns: cols(
		required("fee_id"), one("value", Amount), one("currency_code", Currency),
		enum("role_type", feeRoleTypes), enum("payment_type", paymentTypes), enum("node_type", feeNodeTypes),
		enum("fee_type", feeTypes), text("partner_name", "account_name"),
		one("upper_limit", Amount), one("lower_limit", Amount), text("payout_method"),
		enum("fee_category", feeCategories), text("fee_description"),
	),
	Key:   []string{"fee_id"},
	Keep:  "_file, _line",
	Whole: true,
}

// PaymentLabelSweep is the last label sweep (GET /v4/payments?with_labels=,
// whatever the date): the payments payment_stale judges by their labels.
var PaymentLabelSweep = Table{
	Name: "payment_label_sweep", Source: raw.SourcePaymentLabel, Prov: ByRun, Payment: "payment_id",
	Columns: cols(
		required("payment_id"), text("payment_state", "end_to_end_id"),
		one("created_at", Time), one("executed_at", Time), one("completed_at", Time), one("modified_at", Time),
		one("labels", Labels), one("quote_amount", Amount), one("quote_currency", Currency),
		text("sender_address", "receiver_address"),
	),
	Key:   []string{"payment_id"},
	Keep:  Payments.Keep,
	Whole: true,
}

// KnownValue is one value of an open list that recon knows.
type KnownValue struct{ Table, Column, Value string }

// KnownValues lists the known values of every Enum column, the one list the
// warehouse's known_values and unknown_values are built from.
func KnownValues() []KnownValue {
	var out []KnownValue
	for _, t := range allTables() {
		for _, c := range t.Columns {
			for _, v := range c.Values {
				out = append(out, KnownValue{t.Name, c.Name, v})
			}
		}
	}
	return out
}

// Canonical maps a field name to the table's column name: names are matched
// case and space insensitively, and the provider's ripplenet_ prefix is
// accepted for network_ (ripplenet_payment_id) or for no prefix
// (ripplenet_sender_address). ok is false for a field the table lacks.
func (t *Table) Canonical(field string) (name string, ok bool) {
	h := strings.ToLower(strings.TrimSpace(field))
	if t.index(h) >= 0 {
		return h, true
	}
	if rest, found := strings.CutPrefix(h, "ripplenet_"); found {
		for _, c := range []string{"network_" + rest, rest} {
			if t.index(c) >= 0 {
				return c, true
			}
		}
	}
	return h, false
}

// index returns the position of a column, or -1.
func (t *Table) index(name string) int {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return i
		}
	}
	return -1
}

func contains(vs []string, s string) bool {
	for _, v := range vs {
		if v == s {
			return true
		}
	}
	return false
}

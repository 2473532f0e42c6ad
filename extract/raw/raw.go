// Package raw is the contract between extraction and every stage after it:
// the raw folder's files (File), their list index.json, the windows they
// cover, and the page envelopes of the paged sources. It imports no other
// package of recon.
package raw

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// DateLayout is the layout of a UTC day.
const DateLayout = "2006-01-02"

// Window is a range of whole UTC days, both ends inclusive.
type Window struct {
	From time.Time // first day, 00:00 UTC
	To   time.Time // last day, 00:00 UTC
}

// NewWindow returns the window of whole UTC days from..to; it truncates both to days.
func NewWindow(from, to time.Time) (Window, error) {
	w := Window{From: day(from), To: day(to)}
	if w.To.Before(w.From) {
		return Window{}, fmt.Errorf("window %s: end before start", w)
	}
	return w, nil
}

// ParseWindow parses two YYYY-MM-DD days.
func ParseWindow(from, to string) (Window, error) {
	f, err := time.Parse(DateLayout, from)
	if err != nil {
		return Window{}, fmt.Errorf("parse from date %q: %w", from, err)
	}
	t, err := time.Parse(DateLayout, to)
	if err != nil {
		return Window{}, fmt.Errorf("parse to date %q: %w", to, err)
	}
	return NewWindow(f, t)
}

func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Start is the first instant of the window.
func (w Window) Start() time.Time { return w.From }

// End is the first instant after the window (exclusive).
func (w Window) End() time.Time { return w.To.AddDate(0, 0, 1) }

// Days is the number of days in the window.
func (w Window) Days() int { return int(w.End().Sub(w.Start()).Hours()/24 + 0.5) }

// IsZero reports whether w is the zero Window (no window).
func (w Window) IsZero() bool { return w.From.IsZero() && w.To.IsZero() }

// Contains reports whether t falls inside the window.
func (w Window) Contains(t time.Time) bool { return !t.Before(w.Start()) && t.Before(w.End()) }

// String formats the window as FROM..TO.
func (w Window) String() string {
	return w.From.Format(DateLayout) + ".." + w.To.Format(DateLayout)
}

type windowJSON struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// MarshalJSON writes {"from":"YYYY-MM-DD","to":"YYYY-MM-DD"}.
func (w Window) MarshalJSON() ([]byte, error) {
	return json.Marshal(windowJSON{w.From.Format(DateLayout), w.To.Format(DateLayout)})
}

// UnmarshalJSON reads the form written by MarshalJSON.
func (w *Window) UnmarshalJSON(b []byte) error {
	var j windowJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	pw, err := ParseWindow(j.From, j.To)
	if err != nil {
		return err
	}
	*w = pw
	return nil
}

// Sources of raw files.
const (
	SourcePaymentOps        = "payment_ops"        // reports/PAYMENT_OPS/<reportId>.csv|json
	SourceRecon             = "recon"              // reports/RECON/<reportId>.csv|json
	SourceFailureConversion = "failure_conversion" // reports/FAILURE_CONVERSION_SSA/<reportId>.csv|json
	SourceStatement         = "statement"          // statements/<account>/<from>_<to>_p<NNNN>.json
	SourceLiquidation       = "liquidation"        // liquidations/<id>.json, one GET /liquidations/{id}
	SourcePayment           = "payment"            // payments/[modified_]<from>_<to>_p<NNNN>.json by executed_at [modified_at]; payments/since_<from>_p<NNNN>.json modified since (PaymentsSince)
	SourcePaymentLabel      = "payment_label"      // payment_labels/<label>_p<NNNN>.json, server API payments with_labels=<label>, any date: the run's label sweep
	SourceTransfer          = "transfer"           // transfers/p<NNNN>.json, newest first
	SourceBalance           = "balance"            // balances/balances.json, a snapshot at FetchedAt
	SourceFee               = "fee"                // fees/p<NNNN>.json, the fee configuration
	// SourceNotificationReceipt is notifications/receipts_<from>_<next>.json:
	// the msg_ids a run read from the webhook spool (receipt times and
	// counts, the offsets read) and how each one's fetch ended.
	SourceNotificationReceipt = "notification_receipt"
	// SourceNotification is notifications/<msg_id>.json, one
	// GET /orchestration/payment/notification/{msg_id}.
	SourceNotification = "notification"
	SourceWallet       = "wallet" // wallets/<vault>/<wallet>/{wallet,balances_<as_of|now>,transactions_<from>_<to>_p<NNNN>,limits}.json
)

// PaymentsSincePrefix starts the path of a page of payments modified since
// its window's start (extract.RecentWindow).
const PaymentsSincePrefix = "payments/since_"

// PaymentsSince reports whether f is a page of payments modified since its
// window's start: it also lists payments of later days, and the loader keeps
// of it only those the two lists over the window would have held, the
// payments executed or last modified in the window (InPaymentWindow).
func PaymentsSince(f File) bool {
	return f.Source == SourcePayment && strings.HasPrefix(f.Path, PaymentsSincePrefix)
}

// InPaymentWindow reports whether t is inside the bounds the payments lists
// over w ask: after From-1ms and before End, both exclusive.
func InPaymentWindow(w Window, t time.Time) bool {
	return t.After(w.Start().Add(-time.Millisecond)) && t.Before(w.End())
}

// Report types (spec: reporting service), the sources of report files.
const (
	ReportPaymentOps        = "PAYMENT_OPS"
	ReportRecon             = "RECON"
	ReportFailureConversion = "FAILURE_CONVERSION_SSA"
)

// ReportTypes lists every report type in a fixed order.
var ReportTypes = []string{ReportPaymentOps, ReportRecon, ReportFailureConversion}

// Formats and statuses of raw files (a report's status READY, EMPTY or FAILED).
const (
	FormatCSV  = "CSV"
	FormatJSON = "JSON"

	StatusReady  = "READY"
	StatusFailed = "FAILED"
	// StatusNotConfigured is the status of a File without a file for a
	// source the configuration leaves out (the wallet without
	// RECON_WALLET_URL): the rules reading its tables are held, but the run
	// is not incomplete.
	StatusNotConfigured = "NOT_CONFIGURED"
	StatusEmpty         = "EMPTY"
)

// File is one file as received from the network, with its provenance.
// Extract writes the list of them to index.json in the raw folder.
type File struct {
	Source   string `json:"source"`              // one of the Source* constants
	Format   string `json:"format"`              // CSV or JSON
	Path     string `json:"path"`                // relative to the raw folder, slash-separated
	SHA256   string `json:"sha256"`              // hex of the file's bytes ("" when Status is EMPTY or FAILED)
	Size     int64  `json:"size"`                // bytes
	Window   Window `json:"window"`              // days the file covers
	Status   string `json:"status"`              // READY, EMPTY or FAILED (reports); READY, or FAILED (or NOT_CONFIGURED) without a file for a source not pulled
	ReportID string `json:"report_id,omitempty"` // reports only
	Account  string `json:"account,omitempty"`   // statements; wallets: vault_id/wallet_id
	Page     int    `json:"page,omitempty"`      // paged sources: zero-based page number
	Request  string `json:"request"`             // method and URL that produced the file (no secrets)
	// FetchedAt is the response's Date header (the client's clock when it has
	// none); set for balances only, whose snapshot it keys, so the index of
	// the other sources stays the same from run to run.
	FetchedAt time.Time `json:"fetched_at,omitzero"`
}

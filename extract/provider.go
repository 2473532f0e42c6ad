package extract

import "time"

// This file is the one place that records what the provider's documents
// leave "not shown" and what we chose instead. docs/provider-choices.md
// explains each choice; the sandbox serves exactly these.

// Paths relative to each service base.
const (
	PathToken           = "/v2/oauth/token"                      // relative to RECON_AUTH_URL
	PathReports         = "/v1/reports"                          // relative to RECON_REPORTING_URL
	PathReportDownload  = "/v1/reports/download/"                // + report id
	PathStatement       = "/statement/"                          // + account@address, relative to RECON_SERVER_URL (…/v4)
	PathPayments        = "/payments"                            // relative to RECON_SERVER_URL
	PathTransfers       = "/transfers"                           // relative to RECON_SERVER_URL
	PathBalances        = "/monitor/balances"                    // relative to RECON_SERVER_URL (provider's path; not shown in spec)
	PathFees            = "/config/fees"                         // relative to RECON_SERVER_URL
	PathLiquidations    = "/liquidations"                        // relative to RECON_LIQUIDATION_URL (no prefix: not shown); + "/" + id for one
	PathLiquidationByID = "/liquidations/network-payment-id/"    // + payment id
	PathNotification    = "/orchestration/payment/notification/" // + msg_id, relative to RECON_SERVER_URL
)

// Report modes: create reports through the API, or collect the ones the
// provider's scheduler generates (full months and month to date).
const (
	ModeCreate  = "create"
	ModeCollect = "collect"

	CreatedByScheduler = "SCHEDULER"
	CreatedByAPI       = "API"
)

// Report types, formats and statuses (spec: reporting service).
const (
	ReportPaymentOps        = "PAYMENT_OPS"
	ReportRecon             = "RECON"
	ReportFailureConversion = "FAILURE_CONVERSION_SSA"

	FormatCSV  = "CSV"
	FormatJSON = "JSON"

	StatusPending = "PENDING"
	StatusReady   = "READY"
	StatusFailed  = "FAILED"
	StatusEmpty   = "EMPTY"
)

// ReportTypes lists every report type in a fixed order.
var ReportTypes = []string{ReportPaymentOps, ReportRecon, ReportFailureConversion}

// Limits of the provider.
const (
	MaxReportDays       = 90  // a report covers 1..90 calendar days
	ReportWindowMonths  = 9   // a report may start at most 9 months back
	MaxStatementPage    = 100 // statement page size 1..100
	MaxServerPage       = 100 // payments, transfers, fees: 1..100 (not shown for fees: same as the others)
	MaxLiquidationPage  = 200 // liquidation page size 1..200 (not shown: real provider's documented maximum)
	DefaultReportTries  = 2   // reports created for one chunk before its FAILED status makes the run incomplete
	DefaultTokenSkew    = 60 * time.Second
	ErrorBodyLimitBytes = 64 << 10 // error bodies are read through this limit

	// Waits for a response's headers (not shown): an API call answers within
	// a minute; a report download may take longer to start, as a provider can
	// build a large report before its first byte.
	HeaderTimeout         = time.Minute
	DownloadHeaderTimeout = 15 * time.Minute
)

// Bounds of our own where the provider says nothing (not shown).
const (
	// MaxListPages: a paged list that has not ended after this many pages
	// is refused (a provider that never says last cannot loop a run).
	MaxListPages = 100_000
	// CreatedSkew: a report found after a failed create (CreateReport) may
	// carry a createdOn up to this much before the client's clock said the
	// POST was sent: the provider's clock is not ours.
	CreatedSkew = 5 * time.Minute
)

// TimeFormat is the provider's 24-character timestamp (YYYY-MM-DDTHH:mm:ss.sssZ),
// used for report startDate/endDate, statement start-date/end-date and payment before/after.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Server API list queries (not shown beyond the spec's parameters):
//
//   - payments: two lists over the window, after/before both exclusive, so a
//     window of days [From, End) asks after = From-1ms, before = End:
//     range_field=EXECUTED_AT (every payment that executed then, in its state
//     now, however late it changed) and range_field=MODIFIED_AT (the payments
//     that never executed: FAILED before execution, or stuck ACCEPTED,
//     LOCKED, …; and any other changed then). A payment on both lists is one
//     row (the loader keeps the latest modified_at).
//   - transfers: no date filter exists; sort_field=CREATED_AT and
//     sort_direction=DESC (the provider's default direction for lists), paged
//     until a page ends before the window. The list may grow at its head
//     while paging (new transfers), which repeats items but never skips one.
//   - liquidations: start_date (inclusive) and end_date (exclusive) in the
//     24-character form select liquidations by created_at; the list holds
//     summaries (no trade_requests), GET /liquidations/{id} the whole record.
const (
	PaymentExecutedAt = "EXECUTED_AT"
	PaymentModifiedAt = "MODIFIED_AT"
	TransferSortField = "CREATED_AT"
	TransferSortDesc  = "DESC"
)

// PaymentRangeFields are the server API payment lists a run pulls, in order.
var PaymentRangeFields = []string{PaymentExecutedAt, PaymentModifiedAt}

// Liquidation fields not shown in the spec (names chosen with the loaders):
// status and trade request status CREATED, QUEUED, STARTED, COMPLETED,
// PARTIALLY_COMPLETED, FAILED; trade_requests[] {id, created_at, modified_at,
// status, amount, destination_currency, trade_exchange, expires_at,
// fiat_available_after_failure, trade_executions[]}; trade_executions[] {id,
// executed_at, status (EXECUTED | FAILED), source_amount, source_currency,
// destination_amount, destination_currency, rate, fee}.

// Report windows: startDate is the first day at 00:00:00.000Z and endDate the
// last day at 23:59:59.999Z (both inclusive, as the spec says). A report holds
// the payments whose quote_ts (PAYMENT_OPS, RECON) or execution_timestamp
// (FAILURE_CONVERSION_SSA) falls inside it (not shown in the spec).
//
// A report's days are those wholly inside [startDate, endDate]: a
// month-to-date report whose endDate is 00:00:00.000 of today covers the days
// before today. Collect mode takes, per type, the SCHEDULER reports of the
// requested format that cover the window (longest first) and names the days
// none covers; it never deletes them.
//
// Statements: start-date inclusive, end-date exclusive (not shown), entries
// selected by created_at.
//
// Reporting error codes (not shown beyond the RPT_1..RPT_8 range):
//
//	RPT_1 invalid request body or parameter
//	RPT_2 date range longer than 90 days or end before start
//	RPT_3 start date more than 9 months back
//	RPT_4 report not found
//	RPT_5 report not ready for download
//	RPT_6 report purged after retention
//	RPT_7 unsupported report type or format
//	RPT_8 internal error

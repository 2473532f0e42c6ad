package extract

import (
	"time"

	"recon/extract/raw"
)

// This file is the one place that records what the provider's documents
// leave "not shown" and what we chose instead. docs/provider-choices.md
// explains each choice; the sandbox serves exactly these.

// Paths relative to each service base.
const (
	PathToken          = "/v2/oauth/token"                      // relative to RECON_AUTH_URL
	PathReports        = "/v1/reports"                          // relative to RECON_REPORTING_URL
	PathReportDownload = "/v1/reports/download/"                // + report id
	PathStatement      = "/statement/"                          // + account@address, relative to RECON_SERVER_URL (…/v4)
	PathPayments       = "/payments"                            // relative to RECON_SERVER_URL
	PathTransfers      = "/transfers"                           // relative to RECON_SERVER_URL
	PathBalances       = "/monitor/balances"                    // relative to RECON_SERVER_URL (provider's path; not shown in spec)
	PathFees           = "/config/fees"                         // relative to RECON_SERVER_URL
	PathLiquidations   = "/liquidations"                        // relative to RECON_LIQUIDATION_URL (no prefix: not shown); + "/" + id for one
	PathNotification   = "/orchestration/payment/notification/" // + msg_id, relative to RECON_SERVER_URL
)

// Report modes: create reports through the API, or collect the ones the
// provider's scheduler generates (full months and month to date).
const (
	ModeCreate  = "create"
	ModeCollect = "collect"

	CreatedByScheduler = "SCHEDULER"
	CreatedByAPI       = "API"
)

// StatusPending is a report not yet READY, EMPTY or FAILED (spec: reporting
// service); report types, formats and the other statuses are in package raw.
const StatusPending = "PENDING"

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
	// PagesAhead: once a list's first page gives its total, up to this many
	// of its next pages are asked for while one is checked (never past the
	// last the total gives); they are still checked and kept in order.
	PagesAhead = 2
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
//   - payments of a recent window (RecentWindow): one list,
//     range_field=MODIFIED_AT with after = From-1ms and no before ("modified
//     since"): a payment is modified when it executes and never before, so
//     the list holds every payment executed in the window, every payment
//     that never executed but changed in it (FAILED before execution, stuck
//     ACCEPTED, LOCKED, …), and the payments modified after the window,
//     which the loader leaves out (raw.PaymentsSince). The same items as the
//     two lists below, in half the requests when the window ends near now.
//   - payments of an older window: two lists over the window, after/before
//     both exclusive, so a window of days [From, End) asks after = From-1ms,
//     before = End: range_field=EXECUTED_AT (every payment that executed
//     then, in its state now, however late it changed) and
//     range_field=MODIFIED_AT (the payments that never executed and any
//     other changed then). Modified since would list every payment changed
//     since the window, which grows with its age.
//     A payment on two lists is one row (the loader keeps the latest modified_at).
//   - transfers: no date filter exists; sort_field=CREATED_AT and
//     sort_direction=DESC (the provider's default direction for lists), paged
//     until a page ends before the window. The list may grow at its head
//     while paging (new transfers), which repeats items but never skips one.
//   - liquidations: start_date (inclusive) and end_date (exclusive) in the
//     24-character form select liquidations by created_at; a list item that
//     carries trade_requests (an array) is taken as the whole record, and
//     GET /liquidations/{id} is called only for the others (DESIGN §3).
const (
	PaymentExecutedAt = "EXECUTED_AT"
	PaymentModifiedAt = "MODIFIED_AT"
	TransferSortField = "CREATED_AT"
	TransferSortDesc  = "DESC"
)

// RecentWindowLag: a window that ended at most this long before the run's
// clock is recent, and its payments are one list modified since its start
// (the list's cost is the window's days plus the lag, against twice the
// window's days for the two lists).
const RecentWindowLag = 48 * time.Hour

// RecentWindow reports whether w ended at most RecentWindowLag before now.
func RecentWindow(w raw.Window, now time.Time) bool { return now.Sub(w.End()) <= RecentWindowLag }

// SweptLabels are the labels of the label sweep, in order: each run lists
// GET /payments?with_labels=<label> (no date filter, page and size as the
// other lists) for each, whatever the payments' dates. The spec's amend flow
// names the two payout-failure labels; FORWARDED and AWAITING_COLLECTION are
// the sub-states the spec names as labels (POST /payments/{id}/sub_state),
// swept so that a payment stuck in them is found however old
// (docs/provider-choices.md). with_labels with several labels means every one
// of them, so each label is its own list.
var SweptLabels = []string{"OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY", "OUTBOUND_TRANSFER_FAILED_RECOVERABLY",
	"FORWARDED", "AWAITING_COLLECTION"}

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

// Wallet service (DESIGN.md §9; the spec shows only the transfer and limit
// writes): the read paths, relative to RECON_WALLET_URL, are
//
//	GET /v2/vaults/{vault}/wallets/{wallet}                        the wallet record
//	GET /v2/vaults/{vault}/wallets/{wallet}/balances[?as_of=]      balances per chain at as_of (default now)
//	GET /v2/vaults/{vault}/wallets/{wallet}/transactions?start_date=&end_date=&page=&size=
//	GET /v2/vaults/{vault}/wallets/{wallet}/policy-rules/limits    the limits, camelCase or snake_case
//
// A balances snapshot at as_of holds the transactions confirmed before
// as_of (as_of itself excluded, like a window's end). A run takes one at
// every midnight of its window and at its end (so drift is judged per UTC
// day, with keys that do not depend on the window), and one now. Transactions are
// selected by created_at, start_date inclusive and end_date exclusive; a
// run asks from WalletLookback before its window, so a transaction created
// late on the day before and confirmed inside the window is seen. Of the
// read paths only balances takes a blockchain (?blockchain=, one chain's
// balances); recon never sends it (the answer breaks balances down by
// chain), and a non-EVM wallet answers it with an error (spec).
const (
	PathWalletVaults   = "/v2/vaults/" // + vault id + PathWallets + wallet id
	PathWallets        = "/wallets/"
	PathWalletBalances = "/balances"
	PathWalletTxs      = "/transactions"
	PathWalletLimits   = "/policy-rules/limits"
	MaxWalletPage      = 100 // wallet transactions page size 1..100 (as the server API's lists)
	WalletLookback     = 24 * time.Hour
)

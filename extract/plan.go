package extract

import (
	"fmt"
	"strings"
)

// Call is a request Extract begins with, known before any request is made.
type Call struct {
	What    string // "token", a report type, "scheduled reports", "statement", "liquidations", "payments by executed_at", …
	Window  Window // days the call covers (zero for the token)
	Account string // statements only
	Request string // method and URL, without secrets
	Then    string // what follows it at run time
}

// Plan lists, without making any request, the calls Extract(ctx, req, dir)
// begins with: the token; one report creation per type and chunk of at most
// MaxReportDays days, or in collect mode the listing of scheduled reports;
// the first statement page of each account; the first liquidation page (when
// a liquidation service is configured); and the first page of each payments
// list, of transfers and fees, and the balances. Polls,
// downloads, details and further pages follow at run time. It refuses what
// Extract refuses before any request.
func (c *Client) Plan(req Request) ([]Call, error) {
	req, err := req.normalise()
	if err == nil {
		err = c.check(req)
	}
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	calls := []Call{{What: "token", Request: "POST " + c.cfg.AuthURL + PathToken, Then: "again shortly before it expires"}}
	switch req.Mode {
	case ModeCreate:
		for _, typ := range req.ReportTypes {
			for _, w := range chunks(req.Reports, MaxReportDays) {
				calls = append(calls, Call{What: typ, Window: w, Request: "POST " + c.cfg.ReportingURL + PathReports,
					Then: "poll until READY, EMPTY or FAILED, then download " + req.Format})
			}
		}
	case ModeCollect:
		calls = append(calls, Call{What: "scheduled reports", Window: req.Reports,
			Request: "GET " + c.cfg.ReportingURL + PathReports + "?created-by=" + CreatedByScheduler,
			Then:    "get and download, per type, the " + req.Format + " reports that cover the window"})
	}
	for _, acct := range req.Accounts {
		calls = append(calls, Call{What: "statement", Window: req.Statements, Account: acct,
			Request: "GET " + c.statementURL(acct, req.Statements, 0, MaxStatementPage), Then: "the next pages up to the last"})
	}
	if !req.Liquidations.IsZero() && c.cfg.LiquidationURL != "" {
		calls = append(calls, Call{What: "liquidations", Window: req.Liquidations,
			Request: "GET " + c.liquidationListURL(req.Liquidations, 0, MaxLiquidationPage), Then: "the next pages, then each liquidation by id"})
	}
	if w := req.Server; !w.IsZero() {
		for _, field := range PaymentRangeFields {
			calls = append(calls, Call{What: "payments by " + strings.ToLower(field), Window: w,
				Request: "GET " + c.paymentURL(paymentQuery(field, w), 0, MaxServerPage), Then: "the next pages up to the last"})
		}
		calls = append(calls,
			Call{What: "transfers", Window: w, Request: "GET " + c.transferURL(0, MaxServerPage), Then: "the next pages until one ends before the window"},
			Call{What: "fees", Request: "GET " + c.feeURL(0, MaxServerPage), Then: "the next pages up to the last"},
			Call{What: "balances", Request: "GET " + c.cfg.ServerURL + PathBalances, Then: "nothing more: one snapshot"})
	}
	if n := req.Notifications; !n.IsZero() {
		calls = append(calls, Call{What: "notifications", Window: req.Server, Request: "GET " + c.notificationURL("{msg_id}"),
			Then: "once per msg_id of " + n.Spool + " past its committed offset, not fetched before"})
	}
	return calls, nil
}

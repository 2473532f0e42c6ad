package extract

import "fmt"

// Call is a request Extract begins with, known before any request is made.
type Call struct {
	What    string // "token", a report type, or "statement"
	Window  Window // days the call covers (zero for the token)
	Account string // statements only
	Request string // method and URL, without secrets
	Then    string // what follows it at run time
}

// Plan lists, without making any request, the calls Extract(ctx, req, dir)
// begins with: the token, one report creation per type and chunk of at most
// MaxReportDays days, and the first statement page of each account. Polls,
// downloads and further pages follow at run time.
func (c *Client) Plan(req Request) ([]Call, error) {
	req, err := req.normalise()
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	calls := []Call{{What: "token", Request: "POST " + c.cfg.AuthURL + PathToken, Then: "again shortly before it expires"}}
	for _, typ := range req.ReportTypes {
		for _, w := range chunks(req.Reports, MaxReportDays) {
			calls = append(calls, Call{What: typ, Window: w, Request: "POST " + c.cfg.ReportingURL + PathReports,
				Then: "poll until READY, EMPTY or FAILED, then download " + req.Format})
		}
	}
	for _, acct := range req.Accounts {
		calls = append(calls, Call{What: "statement", Window: req.Statements, Account: acct,
			Request: "GET " + c.statementURL(acct, req.Statements, 0, MaxStatementPage), Then: "the next pages up to the last"})
	}
	return calls, nil
}

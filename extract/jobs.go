package extract

import (
	"context"
	"fmt"

	"recon/extract/raw"
)

// Call is a request Extract begins with, known before any request is made.
type Call struct {
	What    string     // "token", a report type, "scheduled reports", "statement", "liquidations", "payments by executed_at", …
	Window  raw.Window // days the call covers (zero for the token)
	Account string     // statements only
	Request string     // method and URL, without secrets
	Then    string     // what follows it at run time
}

// job is one unit of an extraction: the call it begins with, which Plan
// lists, and the work Extract runs. Exactly one of run and expand is set,
// except for the token, which the transport gets on the first request.
type job struct {
	call Call // zero for a job that makes no request (liquidations without a service): Plan leaves it out
	run  func(context.Context) (outcome, error)
	// expand, in collect mode, lists the scheduled reports and gives a job
	// per report chosen, and the days none covers; Extract calls it first.
	expand func(context.Context) ([]job, outcome, error)
}

// sourceJobs builds, source by source, the jobs of a request, in the
// order Extract starts them and Plan lists them. A new source adds its
// builder here: one line.
var sourceJobs = []func(c *Client, req Request, dir string) []job{
	(*Client).reportJobs,
	(*Client).statementJobs,
	(*Client).liquidationJobs,
	(*Client).serverJobs,
	(*Client).labelSweepJobs,
	(*Client).walletJobs,
	(*Client).notificationJobs,
}

// jobs is the one list of what an extraction of req into dir does: the
// token (which the transport gets on the first request), then the jobs of
// every source (sourceJobs).
func (c *Client) jobs(req Request, dir string) []job {
	jobs := []job{{call: Call{What: "token", Request: "POST " + c.cfg.AuthURL + PathToken, Then: "again shortly before it expires"}}}
	for _, build := range sourceJobs {
		jobs = append(jobs, build(c, req, dir)...)
	}
	return jobs
}

// reportJobs: one report creation per type and chunk of at most
// MaxReportDays days, or in collect mode the listing of scheduled reports.
func (c *Client) reportJobs(req Request, dir string) []job {
	var jobs []job
	switch req.Mode {
	case ModeCreate:
		for _, typ := range req.ReportTypes {
			for _, w := range chunks(req.Reports, MaxReportDays) {
				jobs = append(jobs, job{
					call: Call{What: typ, Window: w, Request: "POST " + c.cfg.ReportingURL + PathReports,
						Then: "poll until READY, EMPTY or FAILED, then download " + req.Format},
					run: func(ctx context.Context) (outcome, error) {
						return c.createReport(ctx, typ, req.Format, w, dir, req.Cleanup)
					},
				})
			}
		}
	case ModeCollect:
		jobs = append(jobs, job{
			call: Call{What: "scheduled reports", Window: req.Reports,
				Request: "GET " + c.cfg.ReportingURL + PathReports + "?created-by=" + CreatedByScheduler,
				Then:    "get and download, per type, the " + req.Format + " reports that cover the window"},
			expand: func(ctx context.Context) ([]job, outcome, error) { return c.collectReports(ctx, req, dir) },
		})
	}
	return jobs
}

// statementJobs: the statement of each account, and its tail up to the
// balances snapshot when the request has one.
func (c *Client) statementJobs(req Request, dir string) []job {
	windows := []raw.Window{req.Statements}
	if !req.StatementTail.IsZero() {
		windows = append(windows, req.StatementTail)
	}
	var jobs []job
	for _, acct := range req.Accounts {
		for _, w := range windows {
			jobs = append(jobs, job{
				call: Call{What: "statement", Window: w, Account: acct,
					Request: "GET " + c.statementURL(acct, w, 0, MaxStatementPage), Then: "the next pages up to the last"},
				run: func(ctx context.Context) (outcome, error) {
					files, err := c.extractStatement(ctx, acct, w, dir)
					return outcome{files: files}, err
				},
			})
		}
	}
	return jobs
}

// liquidationJobs: the liquidations created in the window, when asked.
func (c *Client) liquidationJobs(req Request, dir string) []job {
	w := req.Liquidations
	if w.IsZero() {
		return nil
	}
	j := job{run: func(ctx context.Context) (outcome, error) { return c.extractLiquidations(ctx, w, dir) }}
	if c.cfg.LiquidationURL != "" {
		j.call = Call{What: "liquidations", Window: w, Request: "GET " + c.liquidationListURL(w, 0, MaxLiquidationPage),
			Then: "the next pages, then each liquidation by id"}
	}
	return []job{j}
}

// Plan lists, without making any request, the calls Extract(ctx, req, dir)
// begins with (see jobs). Polls, downloads, details and further pages
// follow at run time. It refuses what Extract refuses before any request.
func (c *Client) Plan(req Request) ([]Call, error) {
	req, err := req.normalise()
	if err == nil {
		err = c.check(req)
	}
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	var calls []Call
	for _, j := range c.jobs(req, "") {
		if j.call != (Call{}) {
			calls = append(calls, j.call)
		}
	}
	return calls, nil
}

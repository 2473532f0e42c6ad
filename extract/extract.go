package extract

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
)

// Config holds what the Client needs to reach the network.
type Config struct {
	AuthURL      string // token service base: POST {AuthURL}/v2/oauth/token
	ClientID     string
	ClientSecret Secret
	Audience     string // urn:<service>-<env>:<tenant>
	BasicAuth    bool   // send id:secret as Authorization: Basic instead of in the JSON body

	ReportingURL   string // reporting service base
	ServerURL      string // server API base, ending in /v4
	LiquidationURL string // liquidation service base (optional)

	HTTPClient   *http.Client  // nil: a client with dial, TLS and response-header timeouts
	Retry        RetryPolicy   // zero: 5 attempts, 500ms base, 30s cap
	PollInterval time.Duration // first wait before polling a report (default 2s); doubles up to 30s
	PollTimeout  time.Duration // deadline for one report to leave PENDING (default 30m)
	ReportTries  int           // reports created for one chunk while they end FAILED (default DefaultReportTries)

	BodyIdleTimeout  time.Duration // a response body that gives no byte this long fails, retryably (default DefaultBodyIdleTimeout)
	MaxBodyBytes     int64         // cap of one API answer after gzip; report downloads have none (default DefaultMaxBodyBytes)
	MaxDownloadBytes int64         // cap of the raw bytes one Extract writes (default DefaultMaxDownloadBytes)
	InsecureHTTP     bool          // accept http:// service URLs of hosts that are not loopback

	Now    func() time.Time // clock of the 9-month rule and of balances without a Date header (default time.Now)
	Logger *slog.Logger     // nil: discard
}

// Client talks to the token service, the reporting service and the server API.
// Bearer tokens go only to the hosts of ReportingURL, ServerURL and LiquidationURL.
type Client struct {
	cfg       Config
	reporting *url.URL
	http      *http.Client // with auth
	auth      *authTransport
	log       *slog.Logger
	wait      func(context.Context, time.Duration) error // sleep; tests record instead
}

// New builds a Client from cfg. The settings (URLs, credentials) are
// validated by the caller, once, with every problem at once
// (pipeline.Config.Validate); New checks only the knobs a program sets
// (retries, polling) and that the URLs parse.
func New(cfg Config) (*Client, error) {
	var errs []error
	urls := map[string]*url.URL{}
	for _, s := range []*string{&cfg.AuthURL, &cfg.ReportingURL, &cfg.ServerURL, &cfg.LiquidationURL} {
		*s = strings.TrimRight(*s, "/")
		u, err := url.Parse(*s)
		if err != nil {
			errs = append(errs, err)
		}
		urls[*s] = u
	}
	if cfg.Retry == (RetryPolicy{}) {
		cfg.Retry = RetryPolicy{MaxAttempts: defaultAttempts, BaseDelay: defaultBaseDelay, MaxDelay: defaultMaxDelay}
	}
	switch r := cfg.Retry; {
	case r.MaxAttempts < 1:
		errs = append(errs, errors.New("Retry.MaxAttempts must be at least 1"))
	case r.BaseDelay < 0 || r.MaxDelay < r.BaseDelay:
		errs = append(errs, errors.New("Retry delays must satisfy 0 <= BaseDelay <= MaxDelay"))
	}
	if cfg.PollInterval < 0 || cfg.PollTimeout < 0 {
		errs = append(errs, errors.New("PollInterval and PollTimeout must not be negative"))
	}
	if cfg.ReportTries < 0 {
		errs = append(errs, errors.New("ReportTries must not be negative"))
	}
	if cfg.BodyIdleTimeout < 0 || cfg.MaxBodyBytes < 0 || cfg.MaxDownloadBytes < 0 {
		errs = append(errs, errors.New("BodyIdleTimeout, MaxBodyBytes and MaxDownloadBytes must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("extract config: %w", err)
	}
	cfg.PollInterval = cmp.Or(cfg.PollInterval, 2*time.Second)
	cfg.PollTimeout = cmp.Or(cfg.PollTimeout, 30*time.Minute)
	cfg.ReportTries = cmp.Or(cfg.ReportTries, DefaultReportTries)
	cfg.BodyIdleTimeout = cmp.Or(cfg.BodyIdleTimeout, DefaultBodyIdleTimeout)
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.MaxDownloadBytes = cmp.Or(cfg.MaxDownloadBytes, DefaultMaxDownloadBytes)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))

	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{ // no overall timeout: downloads may be long
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConnsPerHost:   workers,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second, // response headers: HeaderTimeout, DownloadHeaderTimeout (Client.do)
		}}
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	plain, authed := *hc, *hc
	plain.Transport = base
	if plain.Timeout == 0 {
		plain.Timeout = HeaderTimeout // token requests: small answers, bounded like any API call
	}
	plain.CheckRedirect = refusePostRedirect(nil) // the token request is a POST: never redirected
	authed.CheckRedirect = refusePostRedirect(hc.CheckRedirect)
	tokens := &tokenSource{
		url: cfg.AuthURL + PathToken, clientID: cfg.ClientID, secret: cfg.ClientSecret, audience: cfg.Audience,
		basic: cfg.BasicAuth, http: &plain, now: time.Now, log: log, maxBody: cfg.MaxBodyBytes,
	}
	auth := &authTransport{base: base, tokens: tokens}
	for _, s := range []string{cfg.ReportingURL, cfg.ServerURL, cfg.LiquidationURL} {
		if s != "" {
			auth.origins = append(auth.origins, origin(urls[s]))
		}
	}
	authed.Transport = auth
	reporting, _ := url.Parse(cfg.ReportingURL + "/")
	return &Client{cfg: cfg, reporting: reporting, http: &authed, auth: auth, log: log, wait: sleep}, nil
}

// refusePostRedirect is a CheckRedirect that refuses the redirect of a POST
// with ErrRedirect, naming the status and the target host only (the body of
// a token request holds the client secret; a report's creation must not be
// sent twice); other redirects go to next (nil: followed, as by default).
func refusePostRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if m := via[0].Method; m == http.MethodPost {
			status := 0
			if req.Response != nil {
				status = req.Response.StatusCode
			}
			return fmt.Errorf("%w: %s %s%s answered HTTP %d, a redirect to host %s", ErrRedirect, m, via[0].URL.Host, via[0].URL.Path,
				status, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// loopback reports whether host is localhost or a loopback address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckBaseURL reports whether s is a base URL extract takes: absolute
// http(s) without user, query or fragment, and plain http only to a
// loopback host unless insecure (--insecure-http). The error completes a
// sentence that starts with the setting's name and value
// (pipeline.Config.Validate checks every service URL with it, once).
func CheckBaseURL(s string, insecure bool) error {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("is not an http(s) URL: want http(s)://host[/path] without user, query or fragment")
	}
	if u.Scheme == "http" && !insecure && !loopback(u.Hostname()) {
		return errors.New("is plain http to a host that is not loopback, which would send the credentials and data in clear: " +
			"use https, or allow it with --insecure-http (RECON_INSECURE_HTTP)")
	}
	return nil
}

// Request says what Extract pulls. A zero Liquidations or Server window
// leaves those sources out.
type Request struct {
	Reports     Window   // report window: created in chunks of at most MaxReportDays, or collected
	Statements  Window   // statement window (the pipeline extends it past Reports)
	Accounts    []string // account@address list whose statements are pulled
	ReportTypes []string // default ReportTypes
	Format      string   // FormatCSV (default) or FormatJSON
	Mode        string   // ModeCreate (default) or ModeCollect
	Cleanup     bool     // create mode: delete each report this run created once it is downloaded or EMPTY

	Liquidations Window // liquidations created in this window, each with its trades (needs LiquidationURL)
	Server       Window // server API payments executed and transfers created in this window, balances and fees

	Notifications Notifications // the webhook spool's new msg_ids, fetched (notification.go); zero: left out
}

// Result lists the raw files of a run.
type Result struct {
	Files      []RawFile // in index order
	Incomplete []string  // reasons the run is incomplete (a FAILED report, days no report covers, …)
}

// ErrWindowTooOld is returned by Extract, before any request, when a create
// mode report window starts more than ReportWindowMonths back.
var ErrWindowTooOld = errors.New("report window starts too far back")

// Concurrency bounds.
const (
	workers            = 4 // report chunks, statement accounts and other sources pulled at once
	liquidationWorkers = 4 // liquidation details fetched at once
)

// reportSources maps report types to raw file sources.
var reportSources = map[string]string{
	ReportPaymentOps:        SourcePaymentOps,
	ReportRecon:             SourceRecon,
	ReportFailureConversion: SourceFailureConversion,
}

// outcome is what one extraction job gives.
type outcome struct {
	files      []RawFile
	incomplete []string
}

type job func(context.Context) (outcome, error)

// Extract pulls every source the request names into dir, then writes
// dir/index.json. A FAILED report (after ReportTries in create mode), days
// no collected report covers, and a liquidation or server API source that
// could not be pulled (see notPulled) give FAILED RawFiles and are named in
// Result.Incomplete; any other failure stops the run.
func (c *Client) Extract(ctx context.Context, req Request, dir string) (*Result, error) {
	ctx = c.withRun(ctx)
	req, err := req.normalise()
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	if err := c.check(req); err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	res := &Result{}
	var jobs []job
	switch req.Mode {
	case ModeCreate:
		for _, typ := range req.ReportTypes {
			for _, w := range chunks(req.Reports, MaxReportDays) {
				jobs = append(jobs, func(ctx context.Context) (outcome, error) {
					return c.createReport(ctx, typ, req.Format, w, dir, req.Cleanup)
				})
			}
		}
	case ModeCollect:
		collected, gaps, err := c.collectReports(ctx, req, dir)
		if err != nil {
			return nil, fmt.Errorf("extract: %w", err)
		}
		jobs, res.Files, res.Incomplete = append(jobs, collected...), gaps.files, gaps.incomplete
	}
	for _, acct := range req.Accounts {
		jobs = append(jobs, func(ctx context.Context) (outcome, error) {
			files, err := c.extractStatement(ctx, acct, req.Statements, dir)
			return outcome{files: files}, err
		})
	}
	if !req.Liquidations.IsZero() {
		jobs = append(jobs, func(ctx context.Context) (outcome, error) {
			return c.extractLiquidations(ctx, req.Liquidations, dir)
		})
	}
	if !req.Server.IsZero() {
		jobs = append(jobs, c.serverJobs(req.Server, dir)...)
	}
	if !req.Notifications.IsZero() {
		jobs = append(jobs, func(ctx context.Context) (outcome, error) {
			return c.extractNotifications(ctx, req.Notifications, req.Server, dir)
		})
	}

	trace := traceOf(ctx)
	trace.planned(len(jobs))
	outs := make([]outcome, len(jobs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i, run := range jobs {
		g.Go(func() (err error) {
			if outs[i], err = run(gctx); err != nil {
				return err // the first error cancels the others
			}
			trace.jobDone()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}

	for _, o := range outs {
		res.Files = append(res.Files, o.files...)
		res.Incomplete = append(res.Incomplete, o.incomplete...)
	}
	slices.SortFunc(res.Files, func(a, b RawFile) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), a.Window.From.Compare(b.Window.From),
			a.Window.To.Compare(b.Window.To), cmp.Compare(a.Account, b.Account), cmp.Compare(a.Page, b.Page),
			cmp.Compare(a.Path, b.Path), cmp.Compare(a.ReportID, b.ReportID))
	})
	if err := writeIndex(dir, res.Files); err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	return res, nil
}

// writeIndex writes dir/index.json, the list of a raw folder's files.
func writeIndex(dir string, files []RawFile) error {
	b, err := json.MarshalIndent(files, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, _, err := writeFile(filepath.Join(dir, "index.json"), bytes.NewReader(b), int64(len(b))); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	return nil
}

// check refuses, before any request, what the provider would refuse: in
// create mode a report window that starts more than ReportWindowMonths back.
func (c *Client) check(req Request) error {
	if req.Mode == ModeCreate {
		if oldest := day(c.cfg.Now()).AddDate(0, -ReportWindowMonths, 0); req.Reports.From.Before(oldest) {
			return fmt.Errorf("%w: %s starts before %s, and the provider makes reports of the last %d months only",
				ErrWindowTooOld, req.Reports, oldest.Format(DateLayout), ReportWindowMonths)
		}
	}
	return nil
}

// normalise fills defaults and checks the request.
func (r Request) normalise() (Request, error) {
	var errs []error
	r.Format = cmp.Or(strings.ToUpper(r.Format), FormatCSV)
	if r.Format != FormatCSV && r.Format != FormatJSON {
		errs = append(errs, fmt.Errorf("format %q: want CSV or JSON", r.Format))
	}
	r.Mode = cmp.Or(strings.ToLower(r.Mode), ModeCreate)
	if r.Mode != ModeCreate && r.Mode != ModeCollect {
		errs = append(errs, fmt.Errorf("report mode %q: want create or collect", r.Mode))
	}
	if r.Cleanup && r.Mode != ModeCreate {
		errs = append(errs, errors.New("cleanup deletes created reports: it needs create mode"))
	}
	if len(r.ReportTypes) == 0 {
		r.ReportTypes = ReportTypes
	}
	for _, t := range r.ReportTypes {
		if reportSources[t] == "" {
			errs = append(errs, fmt.Errorf("unknown report type %q", t))
		}
	}
	if r.Reports.From.IsZero() || r.Reports.To.Before(r.Reports.From) {
		errs = append(errs, fmt.Errorf("bad report window %s", r.Reports))
	}
	if len(r.Accounts) > 0 && (r.Statements.From.IsZero() || r.Statements.To.Before(r.Statements.From)) {
		errs = append(errs, fmt.Errorf("bad statement window %s", r.Statements))
	}
	if r.Liquidations.To.Before(r.Liquidations.From) {
		errs = append(errs, fmt.Errorf("bad liquidation window %s", r.Liquidations))
	}
	if r.Server.To.Before(r.Server.From) {
		errs = append(errs, fmt.Errorf("bad server window %s", r.Server))
	}
	names := map[string]string{}
	for _, a := range r.Accounts {
		n := safeName(a)
		if prev, dup := names[n]; a == "" || dup {
			errs = append(errs, fmt.Errorf("account %q: empty, or the same file name as %q", a, prev))
		}
		names[n] = a
	}
	return r, errors.Join(errs...)
}

// chunks splits w into consecutive windows of at most days days.
func chunks(w Window, days int) []Window {
	var out []Window
	for from := w.From; !from.After(w.To); from = from.AddDate(0, 0, days) {
		out = append(out, Window{From: from, To: minTime(from.AddDate(0, 0, days-1), w.To)})
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// createReport creates, waits for and downloads one report chunk. A FAILED
// report is created anew, up to ReportTries reports; when all FAILED the
// chunk gives a FAILED RawFile and a reason, not an error. With cleanup, a
// report that was downloaded or EMPTY, or whose wait or download failed, is
// deleted (a FAILED one is kept for the provider's support).
func (c *Client) createReport(ctx context.Context, typ, format string, w Window, dir string, cleanup bool) (outcome, error) {
	var (
		failed []string
		f      RawFile
	)
	for len(failed) < c.cfg.ReportTries {
		r, err := c.CreateReport(ctx, typ, format, w)
		if err != nil {
			return outcome{}, err
		}
		if f, err = c.finishReport(ctx, r, w, dir); err != nil {
			if cleanup {
				c.cleanup(ctx, r.ID)
			}
			return outcome{}, err
		}
		if f.Status != StatusFailed {
			if cleanup {
				c.cleanup(ctx, r.ID)
			}
			return outcome{files: []RawFile{f}}, nil
		}
		failed = append(failed, r.ID)
		c.log.Warn("report FAILED", "type", typ, "window", w.String(), "report", r.ID, "tries", len(failed))
	}
	return outcome{files: []RawFile{f}, incomplete: []string{fmt.Sprintf("report %s %s FAILED %d times (%s)",
		typ, w, len(failed), strings.Join(failed, ", "))}}, nil
}

// cleanup deletes report id, even when ctx has ended (a run that failed
// still removes what it created), within HeaderTimeout; a failure is logged.
func (c *Client) cleanup(ctx context.Context, id string) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), HeaderTimeout)
	defer cancel()
	if err := c.DeleteReport(dctx, id); err != nil {
		c.log.Warn("cleanup: report not deleted", "report", id, "err", err)
	}
}

// finishReport waits while r is PENDING (or its status is unknown) and then
// downloads it when READY; EMPTY and FAILED give a RawFile without a file.
// w is the window its RawFile records when there is no download.
func (c *Client) finishReport(ctx context.Context, r Report, w Window, dir string) (RawFile, error) {
	var err error
	if r.Status == StatusPending || r.Status == "" {
		if r, err = c.WaitReport(ctx, r.ID); err != nil {
			return RawFile{}, err
		}
	}
	c.log.Info("report", "type", r.Type, "window", w.String(), "report", r.ID, "status", r.Status)
	source := reportSources[r.Type]
	if source == "" {
		return RawFile{}, fmt.Errorf("report %s: unknown type %q", r.ID, r.Type)
	}
	switch r.Status {
	case StatusReady:
		return c.DownloadReport(ctx, r, dir, source)
	case StatusEmpty, StatusFailed:
		return RawFile{Source: source, Format: strings.ToUpper(r.Format), Window: w, Status: r.Status,
			ReportID: r.ID, Request: "GET " + c.reportURL(r.ID)}, nil
	}
	return RawFile{}, fmt.Errorf("report %s %s (%s): unknown status %q", r.Type, w, r.ID, r.Status)
}

// extractStatement writes every statement page of one account.
func (c *Client) extractStatement(ctx context.Context, account string, w Window, dir string) ([]RawFile, error) {
	folder := path.Join("statements", safeName(account))
	files, err := c.savePages(ctx, dir, c.statementPager(account, w, MaxStatementPage), func(page int) RawFile {
		return RawFile{Source: SourceStatement, Window: w, Account: account, Page: page,
			Path:    path.Join(folder, fmt.Sprintf("%s_%s_p%04d.json", w.From.Format(DateLayout), w.To.Format(DateLayout), page)),
			Request: "GET " + c.statementURL(account, w, page, MaxStatementPage)}
	})
	if err != nil {
		return nil, fmt.Errorf("statement %s: %w", account, err)
	}
	c.log.Info("statement", "account", account, "window", w.String(), "pages", len(files))
	return files, nil
}

// extractLiquidations lists the liquidations created in w, then fetches
// each one with its trades (liquidationWorkers at a time). When the service
// fails, or none is configured, the source is not pulled (notPulled) and
// the details already written are removed.
func (c *Client) extractLiquidations(ctx context.Context, w Window, dir string) (outcome, error) {
	if c.cfg.LiquidationURL == "" {
		return notPulled(SourceLiquidation, w, "", errNoLiquidationURL), nil
	}
	first := "GET " + c.liquidationListURL(w, 0, MaxLiquidationPage)
	var list liquidationIDs
	if err := c.fetchPages(ctx, c.liquidationPager(w, MaxLiquidationPage), func(p pageInfo, _ []byte) error {
		return list.add(p.items)
	}); err != nil {
		return c.notPulled(ctx, SourceLiquidation, w, first, err)
	}
	ids := list.ids
	run := c.runOf(ctx)
	for _, id := range ids {
		if err := run.claim(liquidationPath(id), id); err != nil {
			return c.notPulled(ctx, SourceLiquidation, w, first, err)
		}
	}
	files := make([]RawFile, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(liquidationWorkers)
	for i, id := range ids {
		g.Go(func() error {
			body, err := c.Liquidation(gctx, id)
			if err != nil {
				return &pullError{err}
			}
			f := RawFile{Source: SourceLiquidation, Format: FormatJSON, Status: StatusReady, Window: w,
				Path: liquidationPath(id), Request: "GET " + c.liquidationURL(id)}
			if f.SHA256, f.Size, err = c.save(ctx, dir, f.Path, body); err != nil {
				return fmt.Errorf("liquidation %s: %w", id, err)
			}
			files[i] = f
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		pe := (*pullError)(nil)
		if !errors.As(err, &pe) {
			return outcome{}, err
		}
		if rmErr := os.RemoveAll(filepath.Join(dir, "liquidations")); rmErr != nil {
			return outcome{}, fmt.Errorf("liquidations: %w", rmErr)
		}
		return c.notPulled(ctx, SourceLiquidation, w, first, pe.err)
	}
	c.log.Info("liquidations", "window", w.String(), "count", len(files))
	return outcome{files: files}, nil
}

// liquidationPath is the raw file of liquidation id.
func liquidationPath(id string) string { return path.Join("liquidations", safeName(id)+".json") }

// pullError is a failure to pull a source (the provider failed or answered
// what recon cannot read), as opposed to a failure to write what was pulled.
type pullError struct{ err error }

func (e *pullError) Error() string { return e.err.Error() }
func (e *pullError) Unwrap() error { return e.err }

// notPulled is the outcome of a liquidation or server API source that
// could not be pulled for w: a FAILED RawFile without a file, and the
// reason the run is incomplete. The run goes on without the source, as
// with a FAILED report: its previous rows stay, and the pipeline holds the
// rules that read its tables. A cancelled run stops instead.
func (c *Client) notPulled(ctx context.Context, source string, w Window, request string, err error) (outcome, error) {
	if ctx.Err() != nil {
		return outcome{}, fmt.Errorf("%s: %w", source, err)
	}
	c.log.Warn("source not pulled", "source", source, "window", w.String(), "err", err)
	return notPulled(source, w, request, err), nil
}

func notPulled(source string, w Window, request string, err error) outcome {
	return outcome{
		files:      []RawFile{{Source: source, Format: FormatJSON, Window: w, Status: StatusFailed, Request: request}},
		incomplete: []string{fmt.Sprintf("%s %s not pulled: %v", source, w, err)},
	}
}

// serverJobs pull the server API sources: payments executed and payments
// modified in w, transfers created in w (and any newer), the balances and
// the fees. A source the API fails to give is not pulled (notPulled).
func (c *Client) serverJobs(w Window, dir string) []job {
	paged := func(source string, p pager, name, u func(page int) string) job {
		return func(ctx context.Context) (outcome, error) {
			files, err := c.savePages(ctx, dir, p, func(page int) RawFile {
				return RawFile{Source: source, Window: w, Page: page, Path: name(page), Request: "GET " + u(page)}
			})
			if pe := (*pullError)(nil); errors.As(err, &pe) {
				return c.notPulled(ctx, source, w, "GET "+u(0), pe.err)
			}
			if err != nil {
				return outcome{}, fmt.Errorf("%s: %w", source, err)
			}
			c.log.Info(source, "window", w.String(), "pages", len(files))
			return outcome{files: files}, nil
		}
	}
	var jobs []job
	for _, field := range PaymentRangeFields {
		q := paymentQuery(field, w)
		jobs = append(jobs, paged(SourcePayment, c.paymentPager(q, MaxServerPage),
			func(p int) string { return paymentPath(field, w, p) },
			func(p int) string { return c.paymentURL(q, p, MaxServerPage) }))
	}
	return append(jobs,
		paged(SourceTransfer, c.transferPager(w.Start(), MaxServerPage),
			func(p int) string { return fmt.Sprintf("transfers/p%04d.json", p) },
			func(p int) string { return c.transferURL(p, MaxServerPage) }),
		paged(SourceFee, c.feePager(MaxServerPage),
			func(p int) string { return fmt.Sprintf("fees/p%04d.json", p) },
			func(p int) string { return c.feeURL(p, MaxServerPage) }),
		func(ctx context.Context) (outcome, error) {
			request := "GET " + c.cfg.ServerURL + PathBalances
			body, at, err := c.Balances(ctx)
			if err != nil {
				return c.notPulled(ctx, SourceBalance, w, request, err)
			}
			f := RawFile{Source: SourceBalance, Format: FormatJSON, Status: StatusReady, Window: w, FetchedAt: at,
				Path: "balances/balances.json", Request: request}
			if f.SHA256, f.Size, err = c.save(ctx, dir, f.Path, body); err != nil {
				return outcome{}, fmt.Errorf("balances: %w", err)
			}
			return outcome{files: []RawFile{f}}, nil
		},
	)
}

// savePages fetches every page of p and writes each to dir/<its Path> as
// it arrives; it returns the RawFiles that file(page) describes, completed
// with format, status and hash, once the whole list is read. A failure to
// pull the list is a *pullError; a failure to write a page is not.
func (c *Client) savePages(ctx context.Context, dir string, p pager, file func(page int) RawFile) ([]RawFile, error) {
	var (
		files []RawFile
		werr  error
	)
	err := c.fetchPages(ctx, p, func(_ pageInfo, body []byte) error {
		f := file(len(files))
		f.Format, f.Status = FormatJSON, StatusReady
		if f.SHA256, f.Size, werr = c.save(ctx, dir, f.Path, body); werr != nil {
			return werr
		}
		files = append(files, f)
		return nil
	})
	switch {
	case werr != nil:
		return nil, err
	case err != nil:
		return nil, &pullError{err}
	}
	return files, nil
}

// save writes body to dir/rel through a temporary file, within the run's
// disk budget.
func (c *Client) save(ctx context.Context, dir, rel string, body []byte) (string, int64, error) {
	name := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return "", 0, err
	}
	budget := c.runOf(ctx).budget
	if err := budget.take(int64(len(body))); err != nil {
		return "", 0, err
	}
	sum, n, err := writeFile(name, bytes.NewReader(body), int64(len(body)))
	if err != nil {
		budget.give(int64(len(body)))
	}
	return sum, n, err
}

// ReadIndex reads dir/index.json as written by Extract.
func ReadIndex(dir string) ([]RawFile, error) {
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	var files []RawFile
	if err := json.Unmarshal(b, &files); err != nil {
		return nil, fmt.Errorf("read index %s: %w", dir, err)
	}
	for _, f := range files {
		if f.Path != "" && !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return nil, fmt.Errorf("read index %s: path %q leaves the folder", dir, f.Path)
		}
	}
	return files, nil
}

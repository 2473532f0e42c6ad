package extract

import (
	"bytes"
	"cmp"
	"context"
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

	"recon/extract/raw"
)

// Config holds what the Client needs to reach the network.
type Config struct {
	AuthURL      string // token service base: POST {AuthURL}/v2/oauth/token
	ClientID     string
	ClientSecret Secret
	Audience     string // urn:<service>-<env>:<tenant>
	BasicAuth    bool   // send id:secret as Authorization: Basic instead of in the JSON body

	ReportingURL   string   // reporting service base
	ServerURL      string   // server API base, ending in /v4
	LiquidationURL string   // liquidation service base (optional)
	WalletURL      string   // wallet service base (optional; needs Wallets)
	Wallets        []string // vault_id/wallet_id of each wallet pulled
	WalletAudience string   // when set, the wallet's token is asked for this audience (same credentials)

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
	for _, s := range []*string{&cfg.AuthURL, &cfg.ReportingURL, &cfg.ServerURL, &cfg.LiquidationURL, &cfg.WalletURL} {
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
	tokensFor := func(audience string) *tokenSource {
		return &tokenSource{
			url: cfg.AuthURL + PathToken, clientID: cfg.ClientID, secret: cfg.ClientSecret, audience: audience,
			basic: cfg.BasicAuth, http: &plain, now: time.Now, log: log, maxBody: cfg.MaxBodyBytes,
		}
	}
	auth := &authTransport{base: base, tokens: tokensFor(cfg.Audience)}
	if cfg.WalletURL != "" && cfg.WalletAudience != "" {
		auth.wallet, auth.walletTokens = cfg.WalletURL+"/", tokensFor(cfg.WalletAudience)
	}
	for _, s := range []string{cfg.ReportingURL, cfg.ServerURL, cfg.LiquidationURL, cfg.WalletURL} {
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
	Reports    raw.Window // report window: created in chunks of at most MaxReportDays, or collected
	Statements raw.Window // statement window (the pipeline extends it past Reports)
	// StatementTail is a second statement window per account: the day of
	// the balances snapshot when Statements ends before it, so the snapshot
	// and the ledger describe the same instant (balance_snapshot_mismatch).
	// Zero: none.
	StatementTail raw.Window
	Accounts      []string // account@address list whose statements are pulled
	ReportTypes   []string // default ReportTypes
	Format        string   // FormatCSV (default) or FormatJSON
	Mode          string   // ModeCreate (default) or ModeCollect
	Cleanup       bool     // create mode: delete each report this run created once it is downloaded or EMPTY

	Liquidations raw.Window // liquidations created in this window, each with its trades (needs LiquidationURL)
	Server       raw.Window // server API payments executed and transfers created in this window, balances and fees
	Wallet       raw.Window // each wallet's record, limits, balances at the window's midnights and now, transactions (WalletURL)

	Notifications Notifications // the webhook spool's new msg_ids, fetched (notification.go); zero: left out
}

// Result lists the raw files of a run.
type Result struct {
	Files      []raw.File // in index order
	Incomplete []string   // reasons the run is incomplete (a FAILED report, days no report covers, …)
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
	raw.ReportPaymentOps:        raw.SourcePaymentOps,
	raw.ReportRecon:             raw.SourceRecon,
	raw.ReportFailureConversion: raw.SourceFailureConversion,
}

// outcome is what one extraction job gives.
type outcome struct {
	files      []raw.File
	incomplete []string
}

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
	for _, j := range c.jobs(req, dir) {
		switch {
		case j.expand != nil:
			more, gaps, err := j.expand(ctx)
			if err != nil {
				return nil, fmt.Errorf("extract: %w", err)
			}
			jobs = append(jobs, more...)
			res.Files, res.Incomplete = append(res.Files, gaps.files...), append(res.Incomplete, gaps.incomplete...)
		case j.run != nil:
			jobs = append(jobs, j)
		}
	}

	trace := traceOf(ctx)
	trace.planned(len(jobs))
	outs := make([]outcome, len(jobs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i, j := range jobs {
		g.Go(func() (err error) {
			if outs[i], err = j.run(gctx); err != nil {
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
	slices.SortFunc(res.Files, func(a, b raw.File) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), a.Window.From.Compare(b.Window.From),
			a.Window.To.Compare(b.Window.To), cmp.Compare(a.Account, b.Account), cmp.Compare(a.Page, b.Page),
			cmp.Compare(a.Path, b.Path), cmp.Compare(a.ReportID, b.ReportID))
	})
	if err := raw.WriteIndex(dir, res.Files); err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	return res, nil
}

// check refuses, before any request, what the provider would refuse: in
// create mode a report window that starts more than ReportWindowMonths back.
func (c *Client) check(req Request) error {
	if req.Mode == ModeCreate {
		if oldest := day(c.cfg.Now()).AddDate(0, -ReportWindowMonths, 0); req.Reports.From.Before(oldest) {
			return fmt.Errorf("%w: %s starts before %s, and the provider makes reports of the last %d months only",
				ErrWindowTooOld, req.Reports, oldest.Format(raw.DateLayout), ReportWindowMonths)
		}
	}
	return nil
}

// normalise fills defaults and checks the request.
func (r Request) normalise() (Request, error) {
	var errs []error
	r.Format = cmp.Or(strings.ToUpper(r.Format), raw.FormatCSV)
	if r.Format != raw.FormatCSV && r.Format != raw.FormatJSON {
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
		r.ReportTypes = raw.ReportTypes
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
	if t := r.StatementTail; !t.IsZero() && (t.To.Before(t.From) || !t.From.After(r.Statements.To)) {
		errs = append(errs, fmt.Errorf("bad statement tail %s: want days after the statement window %s", t, r.Statements))
	}
	if r.Liquidations.To.Before(r.Liquidations.From) {
		errs = append(errs, fmt.Errorf("bad liquidation window %s", r.Liquidations))
	}
	if r.Server.To.Before(r.Server.From) {
		errs = append(errs, fmt.Errorf("bad server window %s", r.Server))
	}
	if r.Wallet.To.Before(r.Wallet.From) {
		errs = append(errs, fmt.Errorf("bad wallet window %s", r.Wallet))
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
func chunks(w raw.Window, days int) []raw.Window {
	var out []raw.Window
	for from := w.From; !from.After(w.To); from = from.AddDate(0, 0, days) {
		out = append(out, raw.Window{From: from, To: minTime(from.AddDate(0, 0, days-1), w.To)})
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
func (c *Client) createReport(ctx context.Context, typ, format string, w raw.Window, dir string, cleanup bool) (outcome, error) {
	var (
		failed []string
		f      raw.File
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
		if f.Status != raw.StatusFailed {
			if cleanup {
				c.cleanup(ctx, r.ID)
			}
			return outcome{files: []raw.File{f}}, nil
		}
		failed = append(failed, r.ID)
		c.log.Warn("report FAILED", "type", typ, "window", w.String(), "report", r.ID, "tries", len(failed))
	}
	return outcome{files: []raw.File{f}, incomplete: []string{fmt.Sprintf("report %s %s FAILED %d times (%s)",
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
func (c *Client) finishReport(ctx context.Context, r Report, w raw.Window, dir string) (raw.File, error) {
	var err error
	if r.Status == StatusPending || r.Status == "" {
		if r, err = c.WaitReport(ctx, r.ID); err != nil {
			return raw.File{}, err
		}
	}
	c.log.Info("report", "type", r.Type, "window", w.String(), "report", r.ID, "status", r.Status)
	source := reportSources[r.Type]
	if source == "" {
		return raw.File{}, fmt.Errorf("report %s: unknown type %q", r.ID, r.Type)
	}
	switch r.Status {
	case raw.StatusReady:
		return c.DownloadReport(ctx, r, dir, source)
	case raw.StatusEmpty, raw.StatusFailed:
		return raw.File{Source: source, Format: strings.ToUpper(r.Format), Window: w, Status: r.Status,
			ReportID: r.ID, Request: "GET " + c.reportURL(r.ID)}, nil
	}
	return raw.File{}, fmt.Errorf("report %s %s (%s): unknown status %q", r.Type, w, r.ID, r.Status)
}

// extractStatement writes every statement page of one account.
func (c *Client) extractStatement(ctx context.Context, account string, w raw.Window, dir string) ([]raw.File, error) {
	folder := path.Join("statements", safeName(account))
	files, err := c.savePages(ctx, dir, c.statementPager(account, w, MaxStatementPage), func(page int) raw.File {
		return raw.File{Source: raw.SourceStatement, Window: w, Account: account, Page: page,
			Path:    path.Join(folder, fmt.Sprintf("%s_%s_p%04d.json", w.From.Format(raw.DateLayout), w.To.Format(raw.DateLayout), page)),
			Request: "GET " + c.statementURL(account, w, page, MaxStatementPage)}
	})
	if err != nil {
		return nil, fmt.Errorf("statement %s: %w", account, err)
	}
	c.log.Info("statement", "account", account, "window", w.String(), "pages", len(files))
	return files, nil
}

// extractLiquidations lists the liquidations created in w. Each list page
// is written as it is, as soon as it arrives (memory stays a page's, not the
// day's): an item that carries its trade_requests is read from it; only the
// others are fetched whole, liquidationWorkers at a time, each to its own
// file (DESIGN §3). When the service fails, or none is configured, the
// source is not pulled (notPulled) and the files already written are removed.
func (c *Client) extractLiquidations(ctx context.Context, w raw.Window, dir string) (outcome, error) {
	if c.cfg.LiquidationURL == "" {
		return notPulled(raw.SourceLiquidation, w, "", errNoLiquidationURL), nil
	}
	first := "GET " + c.liquidationListURL(w, 0, MaxLiquidationPage)
	run := c.runOf(ctx)
	var list liquidationIDs
	var written *writeError
	dropWritten := func(err error) (outcome, error) {
		if rmErr := os.RemoveAll(filepath.Join(dir, "liquidations")); rmErr != nil {
			return outcome{}, fmt.Errorf("liquidations: %w", rmErr)
		}
		return c.notPulled(ctx, raw.SourceLiquidation, w, first, err)
	}
	var files []raw.File
	if err := c.fetchPages(ctx, c.liquidationPager(w, MaxLiquidationPage), func(p raw.Page, body []byte) error {
		if err := list.add(p.Items); err != nil {
			return err
		}
		f := raw.File{Source: raw.SourceLiquidation, Format: raw.FormatJSON, Status: raw.StatusReady, Window: w, Page: p.Number,
			Path: liquidationPagePath(w, p.Number), Request: "GET " + c.liquidationListURL(w, p.Number, MaxLiquidationPage)}
		if err := run.claim(f.Path, fmt.Sprintf("list page %d of %s", p.Number, w)); err != nil {
			return err
		}
		var err error
		if f.SHA256, f.Size, err = c.save(ctx, dir, f.Path, body); err != nil {
			return &writeError{fmt.Errorf("liquidations page %d: %w", p.Number, err)}
		}
		files = append(files, f)
		return nil
	}); err != nil {
		if errors.As(err, &written) {
			return outcome{}, written.err
		}
		return dropWritten(err)
	}
	pages := len(files)
	var ids []string // of the summaries, fetched whole into files[pages:]
	for _, it := range list.items {
		if it.whole {
			continue
		}
		if err := run.claim(liquidationPath(it.id), it.id); err != nil {
			return dropWritten(err)
		}
		ids = append(ids, it.id)
		files = append(files, raw.File{Source: raw.SourceLiquidation, Format: raw.FormatJSON, Status: raw.StatusReady, Window: w,
			Path: liquidationPath(it.id), Request: "GET " + c.liquidationURL(it.id)})
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(liquidationWorkers)
	for i, id := range ids {
		f := &files[pages+i] // files no longer grows
		g.Go(func() error {
			body, err := c.Liquidation(gctx, id)
			if err != nil {
				return &pullError{err}
			}
			if f.SHA256, f.Size, err = c.save(ctx, dir, f.Path, body); err != nil {
				return fmt.Errorf("liquidation %s: %w", id, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		pe := (*pullError)(nil)
		if !errors.As(err, &pe) {
			return outcome{}, err
		}
		return dropWritten(pe.err)
	}
	c.log.Info("liquidations", "window", w.String(), "count", len(list.items), "pages", pages, "detail_requests", len(files)-pages)
	return outcome{files: files}, nil
}

// writeError is a failure to write what was pulled, raised inside a page
// callback, where any other error means the list could not be read.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// liquidationPath is the raw file of liquidation id, read with
// GET /liquidations/{id}.
func liquidationPath(id string) string { return path.Join("liquidations", safeName(id)+".json") }

// liquidationPagePath is the raw file of one page of the liquidation list
// of w, named as statement pages are.
func liquidationPagePath(w raw.Window, page int) string {
	return path.Join("liquidations", fmt.Sprintf("%s_%s_p%04d.json", w.From.Format(raw.DateLayout), w.To.Format(raw.DateLayout), page))
}

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
func (c *Client) notPulled(ctx context.Context, source string, w raw.Window, request string, err error) (outcome, error) {
	if ctx.Err() != nil {
		return outcome{}, fmt.Errorf("%s: %w", source, err)
	}
	c.log.Warn("source not pulled", "source", source, "window", w.String(), "err", err)
	return notPulled(source, w, request, err), nil
}

func notPulled(source string, w raw.Window, request string, err error) outcome {
	return outcome{
		files:      []raw.File{{Source: source, Format: raw.FormatJSON, Window: w, Status: raw.StatusFailed, Request: request}},
		incomplete: []string{fmt.Sprintf("%s %s not pulled: %v", source, w, err)},
	}
}

// serverJobs pull the server API sources over req.Server, when asked:
// its payments (PaymentQueries), transfers created in it
// (and any newer), the balances and the fees. A source the API fails to
// give is not pulled (notPulled).
func (c *Client) serverJobs(req Request, dir string) []job {
	w := req.Server
	if w.IsZero() {
		return nil
	}
	paged := func(source string, call Call, p pager, name, u func(page int) string) job {
		call.Request = "GET " + u(0)
		return job{call: call, run: func(ctx context.Context) (outcome, error) {
			files, err := c.savePages(ctx, dir, p, func(page int) raw.File {
				return raw.File{Source: source, Window: w, Page: page, Path: name(page), Request: "GET " + u(page)}
			})
			if pe := (*pullError)(nil); errors.As(err, &pe) {
				return c.notPulled(ctx, source, w, call.Request, pe.err)
			}
			if err != nil {
				return outcome{}, fmt.Errorf("%s: %w", source, err)
			}
			if source == raw.SourceFee { // a snapshot: fee_history dates its versions by it
				at := c.cfg.Now().UTC()
				for i := range files {
					files[i].FetchedAt = at
				}
			}
			c.log.Info(source, "window", w.String(), "pages", len(files))
			return outcome{files: files}, nil
		}}
	}
	const upToTheLast = "the next pages up to the last"
	var jobs []job
	for _, q := range PaymentQueries(w, c.cfg.Now()) {
		jobs = append(jobs, paged(raw.SourcePayment, Call{What: paymentsWhat(q), Window: w, Then: upToTheLast},
			c.paymentPager(q, MaxServerPage),
			func(p int) string { return paymentPath(q, w, p) },
			func(p int) string { return c.paymentURL(q, p, MaxServerPage) }))
	}
	balances := "GET " + c.cfg.ServerURL + PathBalances
	return append(jobs,
		paged(raw.SourceTransfer, Call{What: "transfers", Window: w, Then: "the next pages until one ends before the window"},
			c.transferPager(w.Start(), MaxServerPage),
			func(p int) string { return fmt.Sprintf("transfers/p%04d.json", p) },
			func(p int) string { return c.transferURL(p, MaxServerPage) }),
		paged(raw.SourceFee, Call{What: "fees", Then: upToTheLast}, c.feePager(MaxServerPage),
			func(p int) string { return fmt.Sprintf("fees/p%04d.json", p) },
			func(p int) string { return c.feeURL(p, MaxServerPage) }),
		job{call: Call{What: "balances", Request: balances, Then: "nothing more: one snapshot"},
			run: func(ctx context.Context) (outcome, error) {
				body, at, err := c.Balances(ctx)
				if err != nil {
					return c.notPulled(ctx, raw.SourceBalance, w, balances, err)
				}
				f := raw.File{Source: raw.SourceBalance, Format: raw.FormatJSON, Status: raw.StatusReady, Window: w, FetchedAt: at,
					Path: "balances/balances.json", Request: balances}
				if f.SHA256, f.Size, err = c.save(ctx, dir, f.Path, body); err != nil {
					return outcome{}, fmt.Errorf("balances: %w", err)
				}
				return outcome{files: []raw.File{f}}, nil
			}},
	)
}

// savePages fetches every page of p and writes each to dir/<its Path> as
// it arrives; it returns the RawFiles that file(page) describes, completed
// with format, status and hash, once the whole list is read. A failure to
// pull the list is a *pullError; a failure to write a page is not.
func (c *Client) savePages(ctx context.Context, dir string, p pager, file func(page int) raw.File) ([]raw.File, error) {
	var (
		files []raw.File
		werr  error
	)
	err := c.fetchPages(ctx, p, func(_ raw.Page, body []byte) error {
		f := file(len(files))
		f.Format, f.Status = raw.FormatJSON, raw.StatusReady
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

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
	"sync"
	"time"
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
	Logger       *slog.Logger  // nil: discard
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

// New validates cfg (all problems at once) and returns a Client.
func New(cfg Config) (*Client, error) {
	var errs []error
	check := func(name string, s *string, required bool) {
		v, err := baseURL(name, *s, required)
		*s = v
		errs = append(errs, err)
	}
	check("AuthURL", &cfg.AuthURL, true)
	check("ReportingURL", &cfg.ReportingURL, true)
	check("ServerURL", &cfg.ServerURL, true)
	check("LiquidationURL", &cfg.LiquidationURL, false)
	if cfg.ServerURL != "" && !strings.HasSuffix(cfg.ServerURL, "/v4") {
		errs = append(errs, fmt.Errorf("ServerURL %q: must end in /v4", cfg.ServerURL))
	}
	for _, f := range [][2]string{{"ClientID", cfg.ClientID}, {"ClientSecret", cfg.ClientSecret.Reveal()}, {"Audience", cfg.Audience}} {
		if f[1] == "" {
			errs = append(errs, fmt.Errorf("%s is required", f[0]))
		}
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
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("extract config: %w", err)
	}
	cfg.PollInterval = cmp.Or(cfg.PollInterval, 2*time.Second)
	cfg.PollTimeout = cmp.Or(cfg.PollTimeout, 30*time.Minute)
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
			ResponseHeaderTimeout: time.Minute,
			ExpectContinueTimeout: time.Second,
		}}
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	plain, authed := *hc, *hc
	plain.Transport = base
	tokens := &tokenSource{
		url: cfg.AuthURL + PathToken, clientID: cfg.ClientID, secret: cfg.ClientSecret, audience: cfg.Audience,
		basic: cfg.BasicAuth, http: &plain, now: time.Now, log: log,
	}
	auth := &authTransport{base: base, tokens: tokens}
	for _, s := range []string{cfg.ReportingURL, cfg.ServerURL, cfg.LiquidationURL} {
		if s != "" {
			u, _ := url.Parse(s) // checked by baseURL
			auth.origins = append(auth.origins, origin(u))
		}
	}
	authed.Transport = auth
	reporting, _ := url.Parse(cfg.ReportingURL + "/")
	return &Client{cfg: cfg, reporting: reporting, http: &authed, auth: auth, log: log, wait: sleep}, nil
}

// baseURL checks an absolute http(s) base URL and trims its trailing slash.
func baseURL(name, s string, required bool) (string, error) {
	s = strings.TrimRight(s, "/")
	if s == "" {
		if required {
			return "", fmt.Errorf("%s is required", name)
		}
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return s, fmt.Errorf("%s %q: want http(s)://host[/path] without user, query or fragment", name, s)
	}
	return s, nil
}

// Request says what Extract pulls.
type Request struct {
	Reports     Window   // report window, split into chunks of at most MaxReportDays
	Statements  Window   // statement window (the pipeline extends it past Reports)
	Accounts    []string // account@address list whose statements are pulled
	ReportTypes []string // default ReportTypes
	Format      string   // FormatCSV (default) or FormatJSON
}

// Result lists the raw files of a run.
type Result struct {
	Files      []RawFile // in index order
	Incomplete []string  // reasons the run is incomplete (a FAILED report, …)
}

// workers bounds the report chunks and statement accounts pulled at once.
const workers = 4

// reportSources maps report types to raw file sources.
var reportSources = map[string]string{
	ReportPaymentOps:        SourcePaymentOps,
	ReportRecon:             SourceRecon,
	ReportFailureConversion: SourceFailureConversion,
}

// Extract pulls every report chunk of every type and the statements of every
// account into dir, then writes dir/index.json. A FAILED report is recorded
// and named in Result.Incomplete; any other failure stops the run.
func (c *Client) Extract(ctx context.Context, req Request, dir string) (*Result, error) {
	req, err := req.normalise()
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	type outcome struct {
		files      []RawFile
		incomplete string
	}
	var jobs []func(context.Context) (outcome, error)
	for _, typ := range req.ReportTypes {
		for _, w := range chunks(req.Reports, MaxReportDays) {
			jobs = append(jobs, func(ctx context.Context) (outcome, error) {
				f, why, err := c.extractReport(ctx, typ, req.Format, w, dir)
				return outcome{[]RawFile{f}, why}, err
			})
		}
	}
	for _, acct := range req.Accounts {
		jobs = append(jobs, func(ctx context.Context) (outcome, error) {
			files, err := c.extractStatement(ctx, acct, req.Statements, dir)
			return outcome{files: files}, err
		})
	}

	trace := traceOf(ctx)
	trace.planned(len(jobs))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	outs := make([]outcome, len(jobs))
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, job := range jobs {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				return
			}
			out, err := job(ctx)
			if err != nil {
				cancel(err) // the first error stops the others
				return
			}
			outs[i] = out
			trace.jobDone()
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}

	res := &Result{}
	for _, o := range outs {
		res.Files = append(res.Files, o.files...)
		if o.incomplete != "" {
			res.Incomplete = append(res.Incomplete, o.incomplete)
		}
	}
	slices.SortFunc(res.Files, func(a, b RawFile) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), a.Window.From.Compare(b.Window.From),
			a.Window.To.Compare(b.Window.To), cmp.Compare(a.Account, b.Account), cmp.Compare(a.Page, b.Page))
	})
	b, err := json.MarshalIndent(res.Files, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	b = append(b, '\n')
	if _, _, err := writeFile(filepath.Join(dir, "index.json"), bytes.NewReader(b), int64(len(b))); err != nil {
		return nil, fmt.Errorf("extract: write index: %w", err)
	}
	return res, nil
}

// normalise fills defaults and checks the request.
func (r Request) normalise() (Request, error) {
	var errs []error
	r.Format = cmp.Or(strings.ToUpper(r.Format), FormatCSV)
	if r.Format != FormatCSV && r.Format != FormatJSON {
		errs = append(errs, fmt.Errorf("format %q: want CSV or JSON", r.Format))
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

// extractReport creates, waits for and downloads one report chunk. A FAILED
// report gives a FAILED RawFile and a reason, not an error.
func (c *Client) extractReport(ctx context.Context, typ, format string, w Window, dir string) (RawFile, string, error) {
	r, err := c.CreateReport(ctx, typ, format, w)
	if err != nil {
		return RawFile{}, "", err
	}
	if r.Status == StatusPending || r.Status == "" {
		if r, err = c.WaitReport(ctx, r.ID); err != nil {
			return RawFile{}, "", err
		}
	}
	c.log.Info("report", "type", typ, "window", w.String(), "report", r.ID, "status", r.Status)
	source := reportSources[typ]
	switch r.Status {
	case StatusReady:
		f, err := c.DownloadReport(ctx, r, dir, source)
		if err != nil {
			return RawFile{}, "", err
		}
		return f, "", nil
	case StatusEmpty, StatusFailed:
		f := RawFile{Source: source, Format: format, Window: w, Status: r.Status, ReportID: r.ID, Request: "GET " + c.reportURL(r.ID)}
		if r.Status == StatusFailed {
			return f, fmt.Sprintf("report %s %s (%s) FAILED", typ, w, r.ID), nil
		}
		return f, "", nil
	}
	return RawFile{}, "", fmt.Errorf("report %s %s (%s): unknown status %q", typ, w, r.ID, r.Status)
}

// extractStatement writes every statement page of one account.
func (c *Client) extractStatement(ctx context.Context, account string, w Window, dir string) ([]RawFile, error) {
	folder := path.Join("statements", safeName(account))
	if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(folder)), 0o755); err != nil {
		return nil, fmt.Errorf("statement %s: %w", account, err)
	}
	var files []RawFile
	page := 0
	for body, err := range c.StatementPages(ctx, account, w, MaxStatementPage) {
		if err != nil {
			return nil, err
		}
		rel := path.Join(folder, fmt.Sprintf("%s_%s_p%04d.json", w.From.Format(DateLayout), w.To.Format(DateLayout), page))
		sum, n, err := writeFile(filepath.Join(dir, filepath.FromSlash(rel)), bytes.NewReader(body), int64(len(body)))
		if err != nil {
			return nil, fmt.Errorf("statement %s page %d: %w", account, page, err)
		}
		files = append(files, RawFile{
			Source: SourceStatement, Format: FormatJSON, Path: rel, SHA256: sum, Size: n, Window: w,
			Status: StatusReady, Account: account, Page: page,
			Request: "GET " + c.statementURL(account, w, page, MaxStatementPage),
		})
		page++
	}
	c.log.Info("statement", "account", account, "window", w.String(), "pages", page)
	return files, nil
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

// Package pipeline plans a run over a date range and drives its stages:
// extract, load, rules, report and archive, publishing the DuckDB file only
// when every stage succeeded.
package pipeline

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"recon/extract"
	"recon/extract/raw"
	"recon/output"
)

// Config is everything a run needs, decoded once by the CLI.
type Config struct {
	DB         string // published DuckDB file
	ArchiveURL string // local folder or s3://bucket/prefix
	S3         output.S3Options
	WorkDir    string // where runs are prepared before they are archived
	KeepFailed int    // failed runs' folders kept in WorkDir, the newest (0: none)
	Accounts   []string
	RulesDir   string            // optional folder of rules that add to or override the catalogue
	Params     map[string]string // rule parameter overrides, "rule_id.param" -> value
	Format     string            // report format: CSV or JSON
	ReportMode string            // extract.ModeCreate (default) or extract.ModeCollect
	Cleanup    bool              // create mode: delete the reports the run created once downloaded
	Extract    extract.Config
	// InputDir, when set, replaces the network: the run takes the raw files
	// of an earlier extraction from it (index.json and its files: recon load).
	InputDir string
	Version  string
	Now      func() time.Time
	Logger   *slog.Logger

	// RunTimeout bounds a run up to its publishing (0: none); past it the
	// run ends incomplete and publishes only its ledger entry (Run).
	RunTimeout time.Duration

	Command     string   // what the process is, for the lock holder another writer is told about
	MetricsFile string   // Prometheus text file written after each run ("" : none)
	Schedule    Schedule // `recon schedule` only
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	need := func(v, name string) {
		if strings.TrimSpace(v) == "" {
			errs = append(errs, fmt.Errorf("%s is not set", name))
		}
	}
	need(c.DB, "RECON_DB")
	need(c.ArchiveURL, "RECON_ARCHIVE_URL")
	need(c.WorkDir, "work folder")
	if c.InputDir == "" { // the network is called
		need(c.Extract.AuthURL, "RECON_AUTH_URL")
		need(c.Extract.ClientID, "RECON_CLIENT_ID")
		need(c.Extract.ClientSecret.Reveal(), "RECON_CLIENT_SECRET")
		need(c.Extract.Audience, "RECON_AUDIENCE")
		need(c.Extract.ReportingURL, "RECON_REPORTING_URL")
		need(c.Extract.ServerURL, "RECON_SERVER_URL")
	}
	for _, u := range [][2]string{{c.Extract.AuthURL, "RECON_AUTH_URL"}, {c.Extract.ReportingURL, "RECON_REPORTING_URL"},
		{c.Extract.ServerURL, "RECON_SERVER_URL"}, {c.Extract.LiquidationURL, "RECON_LIQUIDATION_URL"}} {
		if p, err := url.Parse(u[0]); u[0] != "" && (err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "") {
			errs = append(errs, fmt.Errorf("%s %q is not an http(s) URL", u[1], u[0]))
		}
	}
	if u := c.Extract.ServerURL; u != "" && !strings.HasSuffix(strings.TrimRight(u, "/"), "/v4") {
		errs = append(errs, fmt.Errorf("RECON_SERVER_URL %q must end in /v4", u))
	}
	if c.KeepFailed < 0 {
		errs = append(errs, fmt.Errorf("RECON_KEEP_FAILED is %d, want 0 or more", c.KeepFailed))
	}
	if c.RunTimeout < 0 {
		errs = append(errs, fmt.Errorf("RECON_RUN_TIMEOUT is %s, want a positive duration", c.RunTimeout))
	}
	if len(c.Accounts) == 0 {
		errs = append(errs, errors.New("RECON_ACCOUNTS lists no account"))
	}
	for _, a := range c.Accounts {
		if name, addr, ok := strings.Cut(a, "@"); !ok || name == "" || addr == "" {
			errs = append(errs, fmt.Errorf("RECON_ACCOUNTS: %q is not account@address", a))
		}
	}
	errs = append(errs, c.S3.Validate())
	if f := strings.ToUpper(c.Format); f != raw.FormatCSV && f != raw.FormatJSON {
		errs = append(errs, fmt.Errorf("report format %q is not CSV or JSON", c.Format))
	}
	switch m := strings.ToLower(c.ReportMode); {
	case m != "" && m != extract.ModeCreate && m != extract.ModeCollect:
		errs = append(errs, fmt.Errorf("report mode %q is not create or collect", c.ReportMode))
	case c.Cleanup && m == extract.ModeCollect:
		errs = append(errs, errors.New("cleanup deletes the reports a run creates: it needs report mode create"))
	}
	return errors.Join(errs...)
}

// Package pipeline plans a run over a date range and drives its stages:
// extract, load, rules, report and archive, publishing the DuckDB file only
// when every stage succeeded.
package pipeline

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"recon/extract"
	"recon/extract/raw"
	"recon/output"
	"recon/rules"
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

	// WebhookSpool is the webhook receiver's spool (RECON_WEBHOOK_SPOOL);
	// each run fetches its new msg_ids ("": no notification source).
	WebhookSpool string

	catalogue []rules.Rule // the rules a run applies, loaded once by Prepare
}

// Prepare validates cfg and loads its rule catalogue (Catalogue), reporting
// every problem of both at once. Run and PlanRun take a prepared Config as
// it is and prepare any other; a Config changed after Prepare is trusted, so
// prepare it again. The catalogue is read once: a scheduler applies the rule
// files as they were when it started, like the rest of its configuration.
func Prepare(cfg Config) (Config, error) {
	catalogue, err := Catalogue(cfg)
	if err = errors.Join(cfg.Validate(), err); err != nil {
		return cfg, err
	}
	cfg.catalogue = catalogue
	return cfg, nil
}

// prepared returns cfg prepared, once.
func prepared(cfg Config) (Config, error) {
	if cfg.catalogue != nil {
		return cfg, nil
	}
	return Prepare(cfg)
}

// Validate reports every problem of the configuration at once. It owns
// every check of the settings, extract's included: extract.New only builds.
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
		{c.Extract.ServerURL, "RECON_SERVER_URL"}, {c.Extract.LiquidationURL, "RECON_LIQUIDATION_URL"},
		{c.Extract.WalletURL, "RECON_WALLET_URL"}} {
		if u[0] == "" {
			continue
		}
		if err := extract.CheckBaseURL(u[0], c.Extract.InsecureHTTP); err != nil {
			errs = append(errs, fmt.Errorf("%s %q %w", u[1], u[0], err))
		}
	}
	errs = append(errs, extract.CheckWallets(c.Extract.WalletURL, c.Extract.Wallets))
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

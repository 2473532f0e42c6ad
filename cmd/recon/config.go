package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"recon/extract"
	"recon/pipeline"
)

// setting is one configuration value: a flag whose default comes from its
// RECON_* variable, then from a built-in default.
type setting struct {
	flag, env, def, help string
	value                *string
}

// settings are the configuration shared by run, demo and schedule.
type settings struct {
	list []*setting
}

func (s *settings) add(flag, env, def, help string) *string {
	v := new(string)
	s.list = append(s.list, &setting{flag: flag, env: env, def: def, help: help, value: v})
	return v
}

func newSettings() *settings { return &settings{} }

// register adds every setting as a flag of fs.
func (s *settings) register(fs *pflag.FlagSet) {
	for _, st := range s.list {
		def := st.def
		if v, ok := os.LookupEnv(st.env); ok {
			def = v
		}
		fs.StringVar(st.value, st.flag, def, fmt.Sprintf("%s (env %s)", st.help, st.env))
	}
}

// config holds the settings of a pipeline run.
type config struct {
	*settings
	db, archive, work, accounts, rulesDir, format                              *string
	authURL, clientID, audience, reportingURL, serverURL, liquidationURL, auth *string
	s3                                                                         *s3Settings
}

func newConfig() *config {
	s := newSettings()
	return &config{
		settings:       s,
		db:             s.add("db", "RECON_DB", "recon.duckdb", "DuckDB file analysts read"),
		archive:        s.add("archive", "RECON_ARCHIVE_URL", "", "archive: a local folder or s3://bucket/prefix"),
		work:           s.add("work-dir", "RECON_WORK_DIR", "recon-work", "folder where runs are prepared before archiving"),
		accounts:       s.add("accounts", "RECON_ACCOUNTS", "", "comma-separated account@address list of this node"),
		rulesDir:       s.add("rules-dir", "RECON_RULES_DIR", "", "folder of rule files that add to or override the built-in ones"),
		format:         s.add("format", "RECON_REPORT_FORMAT", "CSV", "report format to request: CSV or JSON"),
		authURL:        s.add("auth-url", "RECON_AUTH_URL", "", "token service base URL"),
		clientID:       s.add("client-id", "RECON_CLIENT_ID", "", "OAuth client id (the secret comes only from RECON_CLIENT_SECRET)"),
		audience:       s.add("audience", "RECON_AUDIENCE", "", "token audience, urn:<service>-<env>:<tenant>"),
		reportingURL:   s.add("reporting-url", "RECON_REPORTING_URL", "", "reporting service base URL"),
		serverURL:      s.add("server-url", "RECON_SERVER_URL", "", "server API base URL, ending in /v4"),
		liquidationURL: s.add("liquidation-url", "RECON_LIQUIDATION_URL", "", "liquidation service base URL"),
		auth:           s.add("token-auth", "RECON_TOKEN_AUTH", "body", "how the client secret is sent: body (JSON) or basic (Authorization header)"),
		s3:             newS3Settings(s),
	}
}

// build decodes the settings into a pipeline configuration.
func (c *config) build(a *app) (pipeline.Config, error) {
	if *c.auth != "body" && *c.auth != "basic" {
		return pipeline.Config{}, usageErr("--token-auth must be body or basic, not %q", *c.auth)
	}
	s3, err := c.s3.options()
	if err != nil {
		return pipeline.Config{}, err
	}
	cfg := pipeline.Config{
		DB: *c.db, ArchiveURL: *c.archive, S3: s3, WorkDir: *c.work, Accounts: splitList(*c.accounts),
		RulesDir: *c.rulesDir, Format: strings.ToUpper(*c.format), Version: version, Logger: a.log,
		Extract: extract.Config{
			AuthURL: *c.authURL, ClientID: *c.clientID, ClientSecret: extract.Secret(os.Getenv("RECON_CLIENT_SECRET")),
			Audience: *c.audience, BasicAuth: *c.auth == "basic",
			ReportingURL: *c.reportingURL, ServerURL: *c.serverURL, LiquidationURL: *c.liquidationURL,
			Logger: a.log,
		},
	}
	return cfg, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseDay accepts YYYY-MM-DD, today or yesterday (UTC).
func parseDay(s string, now time.Time) (time.Time, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	switch s {
	case "today":
		return today, nil
	case "yesterday":
		return today.AddDate(0, 0, -1), nil
	}
	t, err := time.Parse(extract.DateLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q: want YYYY-MM-DD, today or yesterday", s)
	}
	return t, nil
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

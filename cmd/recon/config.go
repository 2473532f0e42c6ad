package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/webhook"
	"recon/output"
	"recon/pipeline"
)

// setting is one configuration value. Its value comes from, in this order:
// its flag, its RECON_* variable, the config file, its default.
type setting struct {
	key    string // config file key; the variable is RECON_ + upper(key)
	flag   string // "" for the secret: never on a command line
	def    string
	help   string
	list   bool // comma-separated in flags and variables, an array in the file
	secret bool
}

func (s *setting) env() string { return "RECON_" + strings.ToUpper(s.key) }

// settingNamed returns the setting of a config file key.
func settingNamed(key string) *setting {
	for _, s := range allSettings {
		if s.key == key {
			return s
		}
	}
	panic("no setting " + key)
}

// The settings, by the commands that take them as flags. Every command
// resolves all of them (from variables, file and defaults).
var (
	dbSettings = []*setting{
		{key: "db", flag: "db", def: "recon.duckdb", help: "DuckDB file analysts read"},
	}
	rulesSettings = []*setting{
		{key: "rules_dir", flag: "rules-dir", help: "folder of rule files that add to or override the built-in ones"},
		{key: "params", flag: "param", list: true, help: "rule parameter override rule_id.param=value (repeatable)"},
	}
	workSettings = []*setting{
		{key: "work_dir", flag: "work-dir", def: "recon-work", help: "folder where runs are prepared before archiving"},
	}
	// storeSettings are the archive and its S3 settings; credentials, region,
	// endpoint and retries come from the AWS SDK's standard chain.
	storeSettings = []*setting{
		{key: "archive_url", flag: "archive", help: "archive: a local folder or s3://bucket/prefix"},
		{key: "s3_force_path_style", flag: "s3-force-path-style", def: "false", help: "address S3 buckets in the path (S3-compatible servers)"},
		{key: "s3_sse", flag: "s3-sse", help: "server-side encryption of archived objects: AES256 or aws:kms"},
		{key: "s3_sse_kms_key_id", flag: "s3-sse-kms-key-id", help: "KMS key for --s3-sse aws:kms (default: the bucket's)"},
	}
	runSettings = []*setting{
		{key: "accounts", flag: "accounts", list: true, help: "account@address list of this node whose statements are pulled"},
		{key: "report_format", flag: "report-format", def: "CSV", help: "report format to request: CSV or JSON"},
		{key: "report_mode", flag: "report-mode", def: "create", help: "create reports (at most 90 days each, 9 months back) or collect the provider's scheduled ones (full months and month to date)"},
		{key: "report_cleanup", flag: "cleanup", def: "false", help: "delete the reports a run created once downloaded (create mode)"},
		{key: "auth_url", flag: "auth-url", help: "token service base URL"},
		{key: "client_id", flag: "client-id", help: "OAuth client id"},
		{key: "client_secret", secret: true, help: "OAuth client secret (variable or file only)"},
		{key: "audience", flag: "audience", help: "token audience, urn:<service>-<env>:<tenant>"},
		{key: "token_auth", flag: "token-auth", def: "body", help: "how the client secret is sent: body (JSON) or basic (Authorization header)"},
		{key: "reporting_url", flag: "reporting-url", help: "reporting service base URL"},
		{key: "server_url", flag: "server-url", help: "server API base URL, ending in /v4"},
		{key: "liquidation_url", flag: "liquidation-url", help: "liquidation service base URL"},
		{key: "wallet_url", flag: "wallet-url", help: "wallet service base URL (optional: without it the wallet rules are held)"},
		{key: "wallets", flag: "wallets", list: true, help: "vault_id/wallet_id list of the custody wallets pulled (needs --wallet-url)"},
		{key: "wallet_audience", flag: "wallet-audience", help: "token audience of the wallet service, when it is not --audience (same client credentials)"},
		{key: "insecure_http", flag: "insecure-http", def: "false", help: "accept http:// service URLs of hosts that are not loopback"},
		{key: "body_idle_timeout", flag: "body-idle-timeout", def: extract.DefaultBodyIdleTimeout.String(), help: "a response body that sends no byte this long is dropped and asked again"},
		{key: "max_body", flag: "max-body", def: "256MiB", help: "most bytes of one API answer (a page, a record), after gzip; report downloads have no cap"},
		{key: "max_download_bytes", flag: "max-download-bytes", def: "50GiB", help: "most bytes of raw files (report downloads and pages) one run writes"},
		{key: "metrics_file", flag: "metrics-file", help: "Prometheus text file written after each run (node_exporter textfile collector)"},
		{key: "keep_failed", flag: "keep-failed", def: "3", help: "failed runs whose folders (raw files, starting state) stay in the work folder, the newest"},
		{key: "run_timeout", flag: "run-timeout", def: "6h", help: "deadline of a run before it publishes (Go duration); past it the run ends incomplete and publishes no data"},
	}
	scheduleSettings = []*setting{
		{key: "cron", flag: "cron", def: pipeline.DefaultSchedule.Cron, help: "when the nightly run fires, five-field cron in UTC"},
	}
	nightlySettings = []*setting{
		{key: "recheck_days", flag: "recheck-days", def: strconv.Itoa(pipeline.DefaultSchedule.RecheckDays), help: "days before yesterday reconciled again each night"},
		{key: "catch_up_days", flag: "catch-up-days", def: strconv.Itoa(pipeline.DefaultSchedule.CatchUpDays), help: "the most days a run reaches back to catch up missed days"},
	}
	logSettings = []*setting{
		{key: "log_format", flag: "log-format", def: "auto", help: "log format: auto (text on a terminal, JSON otherwise), text or json"},
		{key: "log_level", flag: "log-level", def: "info", help: "log level: debug, info, warn or error"},
	}
	// webhookSettings are the notification receiver's (recon webhook serve).
	webhookSettings = []*setting{
		{key: "webhook_addr", flag: "addr", def: "127.0.0.1:8090", help: "HOST:PORT the webhook receiver listens on"},
		{key: "webhook_spool", flag: "spool", help: "spool file of received msg_ids (default: recon-webhook.spool beside the database)"},
		{key: "webhook_token", secret: true, help: "secret path token of POST /webhook/<token> (variable or file only)"},
		{key: "webhook_allow", flag: "allow", list: true, def: "127.0.0.0/8,::1/128", help: "CIDRs of the provider's source addresses, others get 403 (default loopback: 127.0.0.0/8,::1/128)"},
	}
	allSettings = slices.Concat(dbSettings, workSettings, storeSettings, rulesSettings, runSettings, scheduleSettings, nightlySettings, logSettings, webhookSettings)
)

// addFlags registers the settings' flags on fs. Defaults shown are the
// built-in ones; variables and the config file come in at resolve time.
func addFlags(fs *pflag.FlagSet, settings ...[]*setting) {
	for _, group := range settings {
		for _, s := range group {
			if s.flag == "" {
				continue
			}
			help := fmt.Sprintf("%s (env %s)", s.help, s.env())
			if s.list {
				fs.StringSlice(s.flag, nil, help)
			} else {
				fs.String(s.flag, s.def, help)
			}
		}
	}
}

// value is a resolved setting and where it came from.
type value struct {
	*setting
	val  string // lists comma-joined
	from string // "flag --x", "env RECON_X", "file PATH" or "default"
}

// configFile is the parsed config file, flattened to setting keys.
type configFile struct {
	path     string
	values   map[string]string
	problems []error
}

// readConfigFile reads the TOML file at path (none if path is ""). Unknown
// keys and bad values are problems, reported with the others.
func readConfigFile(path string) configFile {
	cf := configFile{path: path, values: map[string]string{}}
	if path == "" {
		return cf
	}
	var raw map[string]any
	if _, err := toml.DecodeFile(path, &raw); err != nil {
		// A parse error quotes the text it stumbled on: never the secret's.
		var pe toml.ParseError
		if errors.As(err, &pe) && pe.LastKey == "client_secret" {
			err = fmt.Errorf("line %d: the value of client_secret is malformed (not shown)", pe.Position.Line)
		}
		cf.problems = append(cf.problems, fmt.Errorf("config file %s: %w", path, err))
		return cf
	}
	known := map[string]bool{}
	for _, s := range allSettings {
		known[s.key] = true
	}
	for _, k := range sortedKeys(raw) {
		if !known[k] {
			cf.problems = append(cf.problems, fmt.Errorf("config file %s: unknown key %q", path, k))
			continue
		}
		v, err := fileValue(settingNamed(k), raw[k])
		if err != nil {
			cf.problems = append(cf.problems, fmt.Errorf("config file %s: %s: %w", path, k, err))
			continue
		}
		cf.values[k] = v
	}
	if _, ok := cf.values["client_secret"]; ok {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			cf.problems = append(cf.problems, fmt.Errorf("config file %s holds client_secret and is readable by others (mode %v): chmod 600 it",
				path, fi.Mode().Perm()))
		}
	}
	return cf
}

// fileValue turns a TOML value into the setting's text form.
func fileValue(s *setting, v any) (string, error) {
	if s.key == "params" {
		t, ok := v.(map[string]any)
		if !ok {
			return "", errors.New(`want a table: [params] "rule_id.param" = value, or [params.rule_id] param = value`)
		}
		var out []string
		for _, rule := range sortedKeys(t) {
			if sub, ok := t[rule].(map[string]any); ok {
				for _, p := range sortedKeys(sub) {
					sv, err := scalar(sub[p])
					if err != nil {
						return "", fmt.Errorf("%s.%s: %w", rule, p, err)
					}
					out = append(out, rule+"."+p+"="+sv)
				}
				continue
			}
			sv, err := scalar(t[rule])
			if err != nil {
				return "", fmt.Errorf("%s: %w", rule, err)
			}
			out = append(out, rule+"="+sv)
		}
		return strings.Join(out, ","), nil
	}
	if arr, ok := v.([]any); ok && s.list {
		parts := make([]string, len(arr))
		for i, e := range arr {
			str, ok := e.(string)
			if !ok {
				return "", errors.New("want an array of strings")
			}
			parts[i] = str
		}
		return strings.Join(parts, ","), nil
	}
	return scalar(v)
}

func scalar(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	return "", fmt.Errorf("want a string, number or boolean, not a %T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// defaultArchive is the archive when none is set: a local folder beside
// the database (as recon demo has), so a first run needs no archive setting.
const (
	defaultArchive     = "recon-archive"
	defaultArchiveFrom = "default (" + defaultArchive + " beside RECON_DB)"
)

// resolve finds the value of every setting for cmd. An unset archive is
// defaultArchive in the database's folder.
func (a *app) resolve(cmd *cobra.Command) []value {
	out := make([]value, 0, len(allSettings))
	for _, s := range allSettings {
		out = append(out, a.lookup(cmd.Flags(), s))
	}
	db := slices.IndexFunc(out, func(v value) bool { return v.key == "db" })
	archive := slices.IndexFunc(out, func(v value) bool { return v.key == "archive_url" })
	if strings.TrimSpace(out[archive].val) == "" && strings.TrimSpace(out[db].val) != "" {
		out[archive].val = filepath.Join(filepath.Dir(strings.TrimSpace(out[db].val)), defaultArchive)
		out[archive].from = defaultArchiveFrom
	}
	return out
}

func (a *app) lookup(fs *pflag.FlagSet, s *setting) value {
	if f := fs.Lookup(s.flag); s.flag != "" && f != nil && f.Changed {
		v := f.Value.String()
		if s.list {
			l, _ := fs.GetStringSlice(s.flag)
			v = strings.Join(l, ",")
		}
		return value{s, v, "flag --" + s.flag}
	}
	if v, ok := a.getenv(s.env()); ok && v != "" {
		return value{s, v, "env " + s.env()}
	}
	if v, ok := a.file.values[s.key]; ok {
		return value{s, v, "file " + a.file.path}
	}
	return value{s, s.def, "default"}
}

// decode turns the resolved values into the one typed configuration,
// collecting every problem of form, each with where the value came from.
// The rest (completeness, ranges, URLs, rule files) is pipeline.Prepare's:
// a value decode rejects is left zero, so it is not reported twice.
func (a *app) decode(values []value) (pipeline.Config, error) {
	problems := slices.Clone(a.file.problems)
	get := map[string]value{}
	for _, v := range values {
		get[v.key] = v
	}
	str := func(k string) string { return strings.TrimSpace(get[k].val) }
	num := func(k string) int {
		v := get[k]
		n, err := strconv.Atoi(strings.TrimSpace(v.val))
		if err != nil {
			problems = append(problems, fmt.Errorf("%s %q (%s) is not a whole number", v.env(), v.val, v.from))
		}
		return n
	}
	boolean := func(k string) bool {
		v := get[k]
		b, err := strconv.ParseBool(strings.TrimSpace(v.val))
		if err != nil {
			problems = append(problems, fmt.Errorf("%s %q (%s) is not true or false", v.env(), v.val, v.from))
		}
		return b
	}
	duration := func(k string) time.Duration {
		v := get[k]
		d, err := time.ParseDuration(strings.TrimSpace(v.val))
		if err != nil || d <= 0 {
			problems = append(problems, fmt.Errorf("%s %q (%s) is not a positive duration such as 6h or 90m", v.env(), v.val, v.from))
			return 0
		}
		return d
	}
	size := func(k string) int64 {
		v := get[k]
		n, err := parseBytes(v.val)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s %q (%s): %w", v.env(), v.val, v.from, err))
		}
		return n
	}
	oneOf := func(k string, allowed ...string) string {
		v := strings.ToLower(str(k))
		if !slices.Contains(allowed, v) {
			problems = append(problems, fmt.Errorf("%s %q (%s): want %s", get[k].env(), get[k].val, get[k].from, strings.Join(allowed, " or ")))
			return ""
		}
		return v
	}
	params := map[string]string{}
	for _, p := range splitList(str("params")) {
		k, v, ok := strings.Cut(p, "=")
		if rule, param, dot := strings.Cut(k, "."); !ok || !dot || rule == "" || param == "" {
			problems = append(problems, fmt.Errorf("rule parameter %q (%s): want rule_id.param=value", p, get["params"].from))
			continue
		}
		params[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	cfg := pipeline.Config{
		DB: str("db"), ArchiveURL: str("archive_url"), WorkDir: str("work_dir"), KeepFailed: num("keep_failed"), Accounts: splitList(str("accounts")),
		S3:       output.S3Options{ForcePathStyle: boolean("s3_force_path_style"), SSE: str("s3_sse"), KMSKeyID: str("s3_sse_kms_key_id")},
		RulesDir: str("rules_dir"), Params: params, Format: strings.ToUpper(str("report_format")),
		ReportMode: oneOf("report_mode", extract.ModeCreate, extract.ModeCollect), Cleanup: boolean("report_cleanup"),
		Version: version, Logger: a.log, Command: a.command, MetricsFile: str("metrics_file"), RunTimeout: duration("run_timeout"),
		Extract: extract.Config{
			AuthURL: str("auth_url"), ClientID: str("client_id"), ClientSecret: extract.Secret(str("client_secret")),
			Audience: str("audience"), BasicAuth: oneOf("token_auth", "body", "basic") == "basic",
			ReportingURL: str("reporting_url"), ServerURL: str("server_url"), LiquidationURL: str("liquidation_url"),
			WalletURL: str("wallet_url"), Wallets: splitList(str("wallets")), WalletAudience: str("wallet_audience"),
			InsecureHTTP: boolean("insecure_http"), BodyIdleTimeout: duration("body_idle_timeout"),
			MaxBodyBytes: size("max_body"), MaxDownloadBytes: size("max_download_bytes"),
			Logger: a.log,
		},
		Schedule:     pipeline.Schedule{Cron: str("cron"), RecheckDays: num("recheck_days"), CatchUpDays: num("catch_up_days")},
		WebhookSpool: spoolPath(str("webhook_spool"), str("db")),
	}
	if (str("wallet_url") == "") != (len(cfg.Extract.Wallets) == 0) {
		problems = append(problems, fmt.Errorf("RECON_WALLET_URL (%s) and RECON_WALLETS (%s): set both or neither",
			get["wallet_url"].from, get["wallets"].from))
	}
	for _, vw := range cfg.Extract.Wallets {
		if v, w, ok := strings.Cut(vw, "/"); !ok || v == "" || w == "" || strings.Contains(w, "/") {
			problems = append(problems, fmt.Errorf("RECON_WALLETS (%s): %q is not vault_id/wallet_id", get["wallets"].from, vw))
		}
	}
	oneOf("log_format", "auto", "text", "json")
	if _, err := parseLevel(str("log_level")); err != nil {
		problems = append(problems, fmt.Errorf("%s: %w", get["log_level"].env(), err))
	}
	return cfg, errors.Join(problems...)
}

// pipelineConfig resolves, decodes and prepares (validates, rule catalogue
// loaded: pipeline.Prepare) the configuration of a command that runs the
// pipeline (on the raw files of inputDir instead of the network when it is
// set); any problem is a usage error listing all.
func (a *app) pipelineConfig(cmd *cobra.Command, inputDir string) (pipeline.Config, error) {
	values := a.resolve(cmd)
	cfg, err := a.decode(values)
	cfg.InputDir = inputDir
	cfg, perr := pipeline.Prepare(cfg)
	if err = errors.Join(err, perr); err != nil {
		return cfg, usageErr("configuration:\n%v", err)
	}
	if slices.ContainsFunc(values, func(v value) bool { return v.key == "archive_url" && v.from == defaultArchiveFrom }) {
		a.log.Info("RECON_ARCHIVE_URL is not set: runs are archived to a local folder beside the database; "+
			"set RECON_ARCHIVE_URL (s3://bucket/prefix or a folder) to archive elsewhere", "archive", cfg.ArchiveURL)
	}
	return cfg, nil
}

// parseBytes reads a positive size: bytes, or a whole number with a
// KiB, MiB, GiB or TiB suffix.
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for i, unit := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if num, ok := strings.CutSuffix(s, unit); ok {
			s, mult = strings.TrimSpace(num), int64(1)<<(10*(i+1))
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, errors.New("want a positive size in bytes, or with a KiB, MiB, GiB or TiB suffix")
	}
	return n * mult, nil
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
	t, err := time.Parse(raw.DateLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q: want YYYY-MM-DD, today or yesterday", s)
	}
	return t, nil
}

// spoolPath is the webhook spool: RECON_WEBHOOK_SPOOL, by default
// recon-webhook.spool beside the database. The receiver writes it and
// every run reads it (a missing spool reads as empty).
func spoolPath(spool, db string) string {
	if s := strings.TrimSpace(spool); s != "" {
		return s
	}
	return filepath.Join(filepath.Dir(strings.TrimSpace(db)), "recon-webhook.spool")
}

// decodeWebhook turns the resolved values into the receiver's configuration
// and its listen address, collecting every problem of form. The token's
// presence is checked by the receiver, which alone needs it.
func (a *app) decodeWebhook(values []value) (webhook.Config, string, error) {
	get := map[string]value{}
	for _, v := range values {
		get[v.key] = v
	}
	cfg := webhook.Config{Spool: spoolPath(get["webhook_spool"].val, get["db"].val),
		Token: extract.Secret(strings.TrimSpace(get["webhook_token"].val)), Logger: a.log}
	var problems []error
	allow := get["webhook_allow"]
	for _, c := range splitList(allow.val) {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s %q (%s): want CIDRs such as 203.0.113.0/24", allow.env(), c, allow.from))
			continue
		}
		cfg.Allow = append(cfg.Allow, p.Masked())
	}
	addr := get["webhook_addr"]
	if _, _, err := net.SplitHostPort(strings.TrimSpace(addr.val)); err != nil {
		problems = append(problems, fmt.Errorf("%s %q (%s): want HOST:PORT", addr.env(), addr.val, addr.from))
	}
	return cfg, strings.TrimSpace(addr.val), errors.Join(problems...)
}

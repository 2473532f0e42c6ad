package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"recon/extract"
	"recon/pipeline"
)

// TestValidateOwnsExtractSettings: Config.Validate reports every problem of
// the settings extract uses, all at once, with the rule extract.New used to
// apply on its own (no user, query or fragment in a base URL): what recon
// config check accepts, a run accepts.
func TestValidateOwnsExtractSettings(t *testing.T) {
	cfg := pipeline.Config{DB: "r.duckdb", ArchiveURL: "archive", WorkDir: "work", Accounts: []string{"a@b"}, Format: "CSV",
		Extract: extract.Config{AuthURL: "ftp://auth", ServerURL: "http://s/v3", ReportingURL: "https://user:pw@reporting",
			LiquidationURL: "http://liquidation/?x=1", ClientSecret: "s3cr3t"}}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate accepted bad extract settings")
	}
	for _, want := range []string{`RECON_AUTH_URL "ftp://auth" is not an http(s) URL`, `RECON_SERVER_URL "http://s/v3" must end in /v4`,
		`RECON_REPORTING_URL "https://user:pw@reporting" is not an http(s) URL`, `RECON_LIQUIDATION_URL "http://liquidation/?x=1" is not`,
		`RECON_SERVER_URL "http://s/v3" is plain http to a host that is not loopback`,
		"RECON_CLIENT_ID is not set", "RECON_AUDIENCE is not set"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems lack %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("problems hold the secret: %v", err)
	}
	cfg.Extract.InsecureHTTP = true
	if err := cfg.Validate(); strings.Contains(err.Error(), "plain http") {
		t.Errorf("--insecure-http still refuses plain http: %v", err)
	}
}

// TestRunUsesThePreparedCatalogue: the rule files are read once, by
// Prepare; the run (rules, saved inputs, metrics) applies that catalogue,
// even when the files change afterwards.
func TestRunUsesThePreparedCatalogue(t *testing.T) {
	e := newEnv(t, 1)
	dir := t.TempDir()
	builtin, err := os.ReadFile(filepath.Join("..", "rules", "ops_missing_in_recon.sql"))
	if err != nil {
		t.Fatal(err)
	}
	override := strings.Replace(string(builtin), "-- severity: P2", "-- severity: P1", 1)
	if override == string(builtin) {
		t.Fatal("the rule file has no severity P2 header")
	}
	rule := filepath.Join(dir, "ops_missing_in_recon.sql")
	if err := os.WriteFile(rule, []byte(override), 0o644); err != nil {
		t.Fatal(err)
	}
	e.cfg.RulesDir = dir
	e.cfg.MetricsFile = filepath.Join(t.TempDir(), "recon.prom")
	cfg, err := pipeline.Prepare(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rule, []byte("-- id: broken\nnot a rule"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := pipeline.Run(t.Context(), cfg, mustWindow(t, 0, 0))
	if err != nil {
		t.Fatalf("run with the prepared catalogue: %v", err)
	}
	saved, err := os.ReadFile(filepath.Join(cfg.ArchiveURL, strings.TrimPrefix(res.Archive, cfg.ArchiveURL+"/"), "inputs", "rules", "ops_missing_in_recon.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if string(saved) != override {
		t.Errorf("archived rule file is not the prepared one:\n%s", saved)
	}
	if _, ok := metrics(t, cfg.MetricsFile)["recon_open_breaks"]["rule=ops_missing_in_recon,severity=P1"]; !ok {
		t.Errorf("metrics lack the prepared rule's series: %v", metrics(t, cfg.MetricsFile)["recon_open_breaks"])
	}
	if _, err := pipeline.Run(t.Context(), e.cfg, mustWindow(t, 0, 0)); err == nil || !strings.Contains(err.Error(), "rules") {
		t.Errorf("an unprepared config reads the broken file: %v", err)
	}
}

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCheckReportsEachProblemOnce: a value the decoding rejects
// (with where it came from) is not reported again by the validation, and a
// base URL that extract would refuse is refused by config check already.
func TestConfigCheckReportsEachProblemOnce(t *testing.T) {
	hermetic(t)
	t.Setenv("RECON_REPORT_MODE", "fetch")
	t.Setenv("RECON_RUN_TIMEOUT", "-1h")
	t.Setenv("RECON_REPORTING_URL", "https://user:pw@reporting.example")
	code, stdout, _ := run(t, "config", "check", "--db", filepath.Join(t.TempDir(), "recon.duckdb"))
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	for _, want := range []string{"fetch", "-1h", "user:pw@reporting.example"} {
		n := 0
		for _, l := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "- ") && strings.Contains(l, want) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d problems mention %q, want 1:\n%s", n, want, stdout)
		}
	}
}

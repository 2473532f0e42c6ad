package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	for _, key := range []string{"RECON_AUTH_URL", "RECON_CLIENT_ID", "RECON_CLIENT_SECRET", "RECON_ACCOUNTS", "RECON_ARCHIVE_URL"} {
		t.Setenv(key, "")
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"unknown flag", []string{"run", "--nope"}, "unknown flag"},
		{"missing dates", []string{"run"}, "--from and --to are required"},
		{"bad date", []string{"run", "--from", "2026-02-30", "--to", "today"}, "want YYYY-MM-DD"},
		{"reversed window", []string{"run", "--from", "today", "--to", "yesterday"}, "end before start"},
		{"missing configuration", []string{"run", "--from", "yesterday", "--to", "yesterday"}, "RECON_AUTH_URL is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tt.want)
			}
		})
	}
}

// TestDemo runs the demo command in a temporary folder and checks what it leaves.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	db, archive := filepath.Join(dir, "recon.duckdb"), filepath.Join(dir, "archive")
	code, stdout, stderr := run(t, "demo", "--days", "2", "--db", db, "--archive", archive, "--work-dir", filepath.Join(dir, "work"))
	if code != exitOK {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "breaks found by rule") || !strings.Contains(stdout, db) {
		t.Errorf("demo output lacks the summary:\n%s", stdout)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(archive, "run_date=*", "run_id=*", "manifest.json")); len(m) != 1 {
		t.Fatalf("manifests: %v", m)
	}
	code, stdout, _ = run(t, "breaks", "--open", "--db", db)
	if code != exitOK || !strings.Contains(stdout, "ops_missing_in_recon") {
		t.Fatalf("breaks exit %d:\n%s", code, stdout)
	}
}

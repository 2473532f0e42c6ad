package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/extract/sandbox/sandboxtest"
	"recon/output/s3test"
	"recon/pipeline"
)

var runIDPattern = regexp.MustCompile(`run (r-\d{8}T\d{6}Z) over`)

// TestArchiveAndReplayCommands: a demo run archived to S3 while the server
// is down ends incomplete (exit 3) and says how to finish; recon archive
// finishes it once the server is back; recon replay reproduces it; a
// tampered input makes recon replay fail.
func TestArchiveAndReplayCommands(t *testing.T) {
	srv := s3test.Fake(t)
	srv.Env(t)
	dir := t.TempDir()
	db, work, archive := filepath.Join(dir, "recon.duckdb"), filepath.Join(dir, "work"), srv.URL("nightly")
	s3flags := []string{"--archive", archive, "--s3-force-path-style", "true"}
	t.Setenv("AWS_MAX_ATTEMPTS", "1")

	srv.Stop()
	code, stdout, stderr := run(t, append([]string{"demo", "--days", "2", "--db", db, "--work-dir", work}, s3flags...)...)
	if code != exitIncomplete || !strings.Contains(stdout, "complete it with recon archive --run") {
		t.Fatalf("demo with S3 down: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	m := runIDPattern.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no run id in:\n%s", stdout)
	}
	runID := m[1]

	srv.Start(t)
	code, stdout, stderr = run(t, append([]string{"archive", "--run", runID, "--db", db, "--work-dir", work}, s3flags...)...)
	if code != exitOK || !strings.Contains(stdout, "run "+runID+" archived: s3://") {
		t.Fatalf("archive: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, append([]string{"replay", "--run", runID}, s3flags...)...)
	if code != exitOK || !strings.Contains(stdout, "replay is byte-identical") || strings.Contains(stdout, "DIFFERS") {
		t.Fatalf("replay: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	// Tamper with an archived input, through S3.
	keys, err := srv.Client(t).ListObjectsV2(context.Background(), listInput(srv.Bucket, "nightly/"))
	if err != nil {
		t.Fatal(err)
	}
	var key string
	for _, o := range keys.Contents {
		if strings.Contains(*o.Key, "/inputs/reports/PAYMENT_OPS/") {
			key = *o.Key
		}
	}
	if key == "" {
		t.Fatal("no archived PAYMENT_OPS input")
	}
	putObject(t, srv, key, "network_payment_id\r\nforged\r\n")
	code, _, stderr = run(t, append([]string{"replay", "--run", runID}, s3flags...)...)
	// The manifest check, or before it the SDK's check of the object's
	// stored checksum, refuses the file.
	if code != exitError || !strings.Contains(stderr, "fetch inputs") || !strings.Contains(stderr, "inputs/reports/PAYMENT_OPS/") {
		t.Fatalf("replay of a tampered input: exit %d, stderr %q", code, stderr)
	}
}

// TestDiffCommand diffs two archived runs over overlapping days.
func TestDiffCommand(t *testing.T) {
	day0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	clock := time.Date(2026, 10, 12, 6, 0, 0, 0, time.UTC)
	srv := sandboxtest.Serve(t, sandbox.Config{Seed: 7, Start: day0, Days: 6, Now: func() time.Time { return clock }})
	dir := t.TempDir()
	cfg := pipeline.Config{
		DB: filepath.Join(dir, "recon.duckdb"), ArchiveURL: filepath.Join(dir, "archive"), WorkDir: filepath.Join(dir, "work"),
		Accounts: srv.Sandbox.Accounts(), Format: raw.FormatCSV, Version: "test",
		Now:     func() time.Time { clock = clock.Add(time.Second); return clock },
		Extract: srv.ExtractConfig(extract.Config{PollInterval: time.Millisecond, Retry: extract.RetryPolicy{MaxAttempts: 3}}),
	}
	var ids []string
	for i, days := range [][2]int{{0, 3}, {2, 5}} {
		if i == 1 { // a threshold no payment exceeds: the second run resolves those breaks
			cfg.Params = map[string]string{"fx_rate_outlier.threshold_bps": "1000000"}
		}
		w, _ := raw.NewWindow(day0.AddDate(0, 0, days[0]), day0.AddDate(0, 0, days[1]))
		res, err := pipeline.Run(context.Background(), cfg, w)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.RunID)
	}
	code, stdout, stderr := run(t, "diff", "--run", ids[0], "--run", ids[1], "--archive", cfg.ArchiveURL)
	if code != exitOK {
		t.Fatalf("diff: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "compared over 2026-10-03..2026-10-04") ||
		!regexp.MustCompile(`new 0, resolved [1-9]\d*, changed \d+`).MatchString(stdout) ||
		!strings.Contains(stdout, "fx_rate_outlier") || strings.Contains(stdout, "ops_missing_in_recon") {
		t.Errorf("diff output:\n%s", stdout)
	}
	// The only change: a balance snapshot break both runs see (each pulls the
	// snapshot day's statement), new in A and persisting in B.
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "changed") && !regexp.MustCompile(`balance_snapshot_mismatch .* new +persisting$`).MatchString(l) {
			t.Errorf("unexpected change: %s", l)
		}
	}
	code, stdout, _ = run(t, "diff", "--run", ids[0], "--run", ids[1], "--archive", cfg.ArchiveURL, "--format", "csv")
	if code != exitOK || !strings.HasPrefix(stdout, "change,break_id,rule_id") {
		t.Fatalf("diff csv: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := run(t, "diff", "--run", ids[0], "--archive", cfg.ArchiveURL); code != exitUsage {
		t.Errorf("diff with one run: exit %d, %s", code, stderr)
	}
}

func listInput(bucket, prefix string) *s3.ListObjectsV2Input {
	return &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)}
}

func putObject(t *testing.T, srv *s3test.Server, key, body string) {
	t.Helper()
	if _, err := srv.Client(t).PutObject(t.Context(), &s3.PutObjectInput{
		Bucket: aws.String(srv.Bucket), Key: aws.String(key), Body: strings.NewReader(body),
	}); err != nil {
		t.Fatal(err)
	}
}

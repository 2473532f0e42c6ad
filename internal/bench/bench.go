// Package bench is the harness of `make bench`: it generates a sandbox day of
// each size and measures DuckDB's native read_csv, recon's ingest, the rule
// catalogue and `recon run` end to end, each as a child process of the recon
// binary (docs/performance.md). It is not part of a run.
package bench

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"recon/extract/raw"
	"recon/extract/sandbox"
	reconsql "recon/sql"
)

// Config says what Run measures and where.
type Config struct {
	Sizes []int     // payments in the one generated day, one measurement each
	Dir   string    // scratch folder: data and databases of each size, removed afterwards
	Recon string    // the recon binary: every measured phase is a child process of its own
	Keep  bool      // keep each size's folder
	Log   io.Writer // progress lines
	// History: HistoryRuns consecutive nightly windows of HistoryPayments
	// payments a day (history.go); no history phase when HistoryRuns is 0.
	HistoryRuns, HistoryPayments int
}

// Report is what Run measured, on which machine.
type Report struct {
	Machine Machine   `json:"machine"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	Sizes   []Size    `json:"sizes"`
	History *History  `json:"history,omitempty"`
}

// Machine describes where a benchmark ran.
type Machine struct {
	CPUs      int     `json:"cpus"`
	Model     string  `json:"cpu_model"`
	MemoryGiB float64 `json:"memory_gib"`
	OS        string  `json:"os"`
	Go        string  `json:"go"`
	DuckDB    string  `json:"duckdb"`
}

// Size holds the phases measured at one size.
type Size struct {
	Payments int     `json:"payments"`
	Phases   []Phase `json:"phases"`
}

// Phase is one measured line. Peak RSS is of the child process that ran
// it (for a stage of the end-to-end run, the highest RSS sampled during it).
type Phase struct {
	Name       string  `json:"name"`
	Rows       int64   `json:"rows"`
	Bytes      int64   `json:"bytes"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	PeakRSSMiB float64 `json:"peak_rss_mib,omitempty"`
	Ratio      float64 `json:"ratio_to_native,omitempty"` // native seconds / these seconds: above 1 is faster than read_csv
	// RatioAuto is native-auto seconds / these seconds: against plain
	// read_csv with auto-detected types, the fastest DuckDB reads the file.
	RatioAuto float64 `json:"ratio_to_native_auto,omitempty"`
}

// Phase names.
const (
	phaseGenerate = "sandbox: RECON CSV"
	phaseNative   = "native read_csv"
	phaseAuto     = "native read_csv (auto)"
	phaseIngest   = "recon ingest"
	phaseRules    = "rules (catalogue)"
	phaseRun      = "recon run (end to end)"
	phaseSandbox  = "  sandbox serving it"
)

// seed seeds every benchmark's sandbox.
const seed = 1

// Run generates a sandbox day of each size and measures, side by side:
// DuckDB's native read_csv of the RECON CSV into a typed table, recon's
// ingest of the same file, the whole rule catalogue on the loaded data, and
// `recon run` end to end against the sandbox over loopback, stage by stage.
// Each phase runs as a child process (cfg.Recon), so its peak RSS is its own.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	// This process is the network (the sandbox), not recon: it trades memory
	// for less garbage collection, which leaves more of the cores to recon.
	// The children, recon itself, keep the default.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	start := time.Now()
	rep := &Report{Started: start.UTC(), Machine: machine()}
	for _, n := range cfg.Sizes {
		s, err := runSize(ctx, cfg, n)
		if err != nil {
			return rep, fmt.Errorf("bench %d payments: %w", n, err)
		}
		rep.Sizes = append(rep.Sizes, s)
	}
	if cfg.HistoryRuns > 0 {
		h, err := runHistory(ctx, cfg)
		rep.History = h
		if err != nil {
			return rep, fmt.Errorf("bench history: %w", err)
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

func runSize(ctx context.Context, cfg Config, n int) (Size, error) {
	out := Size{Payments: n}
	root := filepath.Join(cfg.Dir, fmt.Sprintf("payments-%d", n))
	if err := os.RemoveAll(root); err != nil {
		return out, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(root)
	}
	// The day before yesterday: its statements (through the next day) are complete.
	now := time.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -2)
	w, err := raw.NewWindow(day, day)
	if err != nil {
		return out, err
	}
	// Served on loopback from the start; `recon run` reaches it last.
	srv, err := sandbox.Serve(sandbox.Config{Seed: seed, Start: day, Days: 1, PaymentsPerDay: n, PendingPolls: -1}, "127.0.0.1:0")
	if err != nil {
		return out, err
	}
	defer srv.Close()
	sb := srv.Sandbox
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "bench %d: "+format+"\n", append([]any{n}, args...)...)
		}
	}

	// The RECON CSV, as the download serves it.
	rel := "reports/RECON/bench.csv"
	csvPath := filepath.Join(root, "raw", filepath.FromSlash(rel))
	gen, err := writeCSV(sb, w, csvPath)
	if err != nil {
		return out, err
	}
	logf("%s: %d rows, %.0f MB in %.1f s", gen.Name, gen.Rows, mb(gen.Bytes), gen.Seconds)
	out.Phases = append(out.Phases, gen)

	native, err := child(ctx, cfg, phaseNative, nil, "--phase", "native", "--csv", csvPath, "--db", filepath.Join(root, "native.duckdb"))
	if err != nil {
		return out, err
	}
	native.Bytes = gen.Bytes
	logf("%s: %.1f s", native.Name, native.Seconds)
	auto, err := child(ctx, cfg, phaseAuto, nil, "--phase", "native-auto", "--csv", csvPath, "--db", filepath.Join(root, "auto.duckdb"))
	if err != nil {
		return out, err
	}
	auto.Bytes = gen.Bytes
	logf("%s: %.1f s", auto.Name, auto.Seconds)
	ingest, err := child(ctx, cfg, phaseIngest, nil, "--phase", "ingest", "--dir", filepath.Join(root, "raw"), "--csv", rel,
		"--from", day.Format(raw.DateLayout), "--db", filepath.Join(root, "ingest.duckdb"))
	if err != nil {
		return out, err
	}
	ingest.Bytes = gen.Bytes
	if ingest.Seconds > 0 {
		ingest.Ratio = native.Seconds / ingest.Seconds
		ingest.RatioAuto = auto.Seconds / ingest.Seconds
	}
	logf("%s: %.1f s, ratio to native %.2f, to native auto %.2f", ingest.Name, ingest.Seconds, ingest.Ratio, ingest.RatioAuto)
	out.Phases = append(out.Phases, native, auto, ingest)
	for _, f := range []string{"native.duckdb", "auto.duckdb", "ingest.duckdb"} {
		os.Remove(filepath.Join(root, f))
	}

	run, err := runEndToEnd(ctx, cfg, srv, w, root)
	if err != nil {
		return out, err
	}
	logf("%s: %.1f s", run[0].Name, run[0].Seconds)

	// The rules again, alone, on what the run published (read no more after).
	db := filepath.Join(root, "recon.duckdb")
	asOf, err := runAsOf(db)
	if err != nil {
		return out, err
	}
	var ruleTimes map[string]float64
	rl, err := child(ctx, cfg, phaseRules, &ruleTimes, "--phase", "rules", "--db", db,
		"--from", day.Format(raw.DateLayout), "--as-of", asOf.Format(time.RFC3339Nano), "--accounts", strings.Join(sb.Accounts(), ","))
	if err != nil {
		return out, err
	}
	logf("%s: %.2f s %v", rl.Name, rl.Seconds, ruleTimes)
	out.Phases = append(out.Phases, rl)
	for _, id := range sortedByValue(ruleTimes) {
		out.Phases = append(out.Phases, Phase{Name: "  " + id, Seconds: ruleTimes[id]})
	}
	out.Phases = append(out.Phases, run...)
	return out, nil
}

// writeCSV writes the window's RECON CSV to path.
func writeCSV(sb *sandbox.Sandbox, w raw.Window, path string) (Phase, error) {
	p := Phase{Name: phaseGenerate}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return p, err
	}
	f, err := os.Create(path)
	if err != nil {
		return p, err
	}
	defer f.Close()
	cpu, start := selfCPU(), time.Now()
	bw := bufio.NewWriterSize(f, 1<<20)
	rows, err := sb.WriteReport(bw, raw.ReportRecon, raw.FormatCSV, w)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		return p, fmt.Errorf("write %s: %w", path, err)
	}
	p.Seconds, p.CPUSeconds = time.Since(start).Seconds(), (selfCPU() - cpu).Seconds()
	p.Rows = int64(rows)
	st, err := os.Stat(path)
	if err != nil {
		return p, err
	}
	p.Bytes = st.Size()
	return p, nil
}

// logTail returns the last n bytes of the file at path.
func logTail(path string, n int64) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b[max(0, int64(len(b))-n):])
}

// runEndToEnd runs `recon run` over the window against the served sandbox
// as a child process. It returns the run and then its stages, with the CPU
// and RSS sampled from /proc during each.
func runEndToEnd(ctx context.Context, cfg Config, srv *sandbox.Served, w raw.Window, root string) ([]Phase, error) {
	env := runEnv(srv, root)
	logFile, err := os.Create(filepath.Join(root, "run.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	day := w.From.Format(raw.DateLayout)
	cmd := exec.CommandContext(ctx, cfg.Recon, "run", "--from", day, "--to", w.To.Format(raw.DateLayout))
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logFile, logFile

	sbCPU, start := selfCPU(), time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	samples := sampleProc(cmd.Process.Pid)
	err = cmd.Wait()
	series := samples()
	took := time.Since(start)
	sandboxCPU := (selfCPU() - sbCPU).Seconds()
	if err != nil { // the folder may go with the bench: say how the run ended
		return nil, fmt.Errorf("recon run (log %s): %w; its last lines:\n%s", logFile.Name(), err, logTail(logFile.Name(), 4096))
	}
	run := phaseOf(phaseRun, cmd.ProcessState, took)
	run.PeakRSSMiB = series.peakMiB()
	stages, err := runStages(filepath.Join(root, "recon.duckdb"))
	if err != nil {
		return nil, err
	}
	if run.Bytes, err = runBytes(filepath.Join(root, "recon.duckdb")); err != nil {
		return nil, err
	}
	out := []Phase{run}
	for _, s := range stages {
		cpu, rss := series.during(s.start, s.end)
		if s.name == "load" {
			out[0].Rows = s.rows
		}
		out = append(out, Phase{Name: "  " + s.name, Rows: s.rows, Seconds: s.end.Sub(s.start).Seconds(), CPUSeconds: cpu, PeakRSSMiB: rss})
	}
	out = append(out, Phase{Name: phaseSandbox, Seconds: took.Seconds(), CPUSeconds: sandboxCPU})
	return out, nil
}

// runEnv is the environment of `recon run` against srv (nil for `recon
// replay`), its database, archive and work folder under root.
func runEnv(srv *sandbox.Served, root string) []string {
	env := append(os.Environ(),
		"RECON_DB="+filepath.Join(root, "recon.duckdb"),
		"RECON_ARCHIVE_URL="+filepath.Join(root, "archive"),
		"RECON_WORK_DIR="+filepath.Join(root, "work"),
		"RECON_LOG_FORMAT=json", "RECON_CONFIG=")
	if srv == nil {
		return env
	}
	for _, kv := range srv.Env() {
		env = append(env, kv[0]+"="+kv[1])
	}
	return env
}

// stage is one row of run_stages.
type stage struct {
	name       string
	start, end time.Time
	rows       int64
}

// runStages reads the stages of the one run in a published database.
func runStages(db string) ([]stage, error) {
	d, err := reconsql.OpenDB(db, true)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	rows, err := d.Query(`SELECT stage, started_at, finished_at, rows FROM run_stages ORDER BY started_at`)
	if err != nil {
		return nil, fmt.Errorf("read run stages: %w", err)
	}
	defer rows.Close()
	var out []stage
	for rows.Next() {
		var s stage
		var n sql.NullInt64
		if err := rows.Scan(&s.name, &s.start, &s.end, &n); err != nil {
			return nil, err
		}
		s.rows = n.Int64
		out = append(out, s)
	}
	return out, rows.Err()
}

// runAsOf is the as-of time of the one run in a published database.
func runAsOf(db string) (time.Time, error) {
	d, err := reconsql.OpenDB(db, true)
	if err != nil {
		return time.Time{}, err
	}
	defer d.Close()
	var t time.Time
	if err := d.QueryRow(`SELECT max(as_of) FROM runs`).Scan(&t); err != nil {
		return t, fmt.Errorf("read run: %w", err)
	}
	return t, nil
}

// runBytes is the size of the raw files the run loaded.
func runBytes(db string) (int64, error) {
	d, err := reconsql.OpenDB(db, true)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	var n int64
	if err := d.QueryRow(`SELECT coalesce(sum(size_bytes), 0) FROM source_files`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read source files: %w", err)
	}
	return n, nil
}

// child runs `recon bench --phase ...` and reads its output; detail, when
// not nil, receives the phase's detail.
func child(ctx context.Context, cfg Config, name string, detail any, args ...string) (Phase, error) {
	cmd := exec.CommandContext(ctx, cfg.Recon, append([]string{"bench"}, args...)...)
	var stdout strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return Phase{}, fmt.Errorf("%s: %w", name, err)
	}
	p := phaseOf(name, cmd.ProcessState, time.Since(start))
	var o PhaseOutput
	if err := json.Unmarshal([]byte(stdout.String()), &o); err != nil {
		return p, fmt.Errorf("%s: output %q: %w", name, stdout.String(), err)
	}
	p.Rows, p.Seconds, p.PeakRSSMiB = o.Rows, o.Seconds, float64(o.PeakRSS)/(1<<20)
	if detail != nil && o.Detail != nil {
		if err := json.Unmarshal(o.Detail, detail); err != nil {
			return p, fmt.Errorf("%s: detail: %w", name, err)
		}
	}
	return p, nil
}

// phaseOf reads the CPU time of a finished child. Its peak RSS is read from
// /proc (VmHWM), not from its rusage: a child's ru_maxrss counts the
// parent's memory it shared between fork and exec, and the parent here
// serves a sandbox of millions of payments.
func phaseOf(name string, ps *os.ProcessState, took time.Duration) Phase {
	return Phase{Name: name, Seconds: took.Seconds(), CPUSeconds: (ps.UserTime() + ps.SystemTime()).Seconds()}
}

// machine describes this machine.
func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	m.Model, m.MemoryGiB = host()
	if db, err := reconsql.OpenDB("", false); err == nil {
		_ = db.QueryRow(`SELECT version()`).Scan(&m.DuckDB)
		db.Close()
	}
	return m
}

// sortedByValue lists the keys of m, largest value first.
func sortedByValue(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	return keys
}

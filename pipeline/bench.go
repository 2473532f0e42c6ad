package pipeline

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"recon/extract"
	"recon/extract/sandbox"
	"recon/rules"
	reconsql "recon/sql"
	"recon/transform"
)

// BenchConfig says what Bench measures and where.
type BenchConfig struct {
	Sizes []int  // payments in the one generated day, one measurement each
	Dir   string // scratch folder: data and databases of each size, removed afterwards
	Recon string // the recon binary: every measured phase is a child process of its own
	// Env is the environment that points recon at a sandbox served at base.
	Env  func(base string, sb *sandbox.Sandbox) [][2]string
	Keep bool      // keep each size's folder
	Log  io.Writer // progress lines
}

// BenchReport is what Bench measured, on which machine.
type BenchReport struct {
	Machine Machine     `json:"machine"`
	Started time.Time   `json:"started"`
	Seconds float64     `json:"seconds"`
	Sizes   []BenchSize `json:"sizes"`
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

// BenchSize holds the phases measured at one size.
type BenchSize struct {
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
}

// Phase names.
const (
	phaseGenerate = "sandbox: RECON CSV"
	phaseNative   = "native read_csv"
	phaseIngest   = "recon ingest"
	phaseRules    = "rules (catalogue)"
	phaseRun      = "recon run (end to end)"
	phaseSandbox  = "  sandbox serving it"
)

// benchSeed seeds every benchmark's sandbox.
const benchSeed = 1

// Bench generates a sandbox day of each size and measures, side by side:
// DuckDB's native read_csv of the RECON CSV into a typed table, recon's
// ingest of the same file, the whole rule catalogue on the loaded data, and
// `recon run` end to end against the sandbox over loopback, stage by stage.
// Each phase runs as a child process (cfg.Recon), so its peak RSS is its own.
func Bench(ctx context.Context, cfg BenchConfig) (*BenchReport, error) {
	// This process is the network (the sandbox), not recon: it trades memory
	// for less garbage collection, which leaves more of the cores to recon.
	// The children, recon itself, keep the default.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	start := time.Now()
	rep := &BenchReport{Started: start.UTC(), Machine: machine()}
	for _, n := range cfg.Sizes {
		s, err := benchSize(ctx, cfg, n)
		if err != nil {
			return rep, fmt.Errorf("bench %d payments: %w", n, err)
		}
		rep.Sizes = append(rep.Sizes, s)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

func benchSize(ctx context.Context, cfg BenchConfig, n int) (BenchSize, error) {
	out := BenchSize{Payments: n}
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
	w, err := extract.NewWindow(day, day)
	if err != nil {
		return out, err
	}
	sb, err := sandbox.New(sandbox.Config{Seed: benchSeed, Start: day, Days: 1, PaymentsPerDay: n, PendingPolls: -1})
	if err != nil {
		return out, err
	}
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "bench %d: "+format+"\n", append([]any{n}, args...)...)
		}
	}

	// The RECON CSV, as the download serves it.
	rel := "reports/RECON/bench.csv"
	csvPath := filepath.Join(root, "raw", filepath.FromSlash(rel))
	gen, err := writeBenchCSV(sb, w, csvPath)
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
	ingest, err := child(ctx, cfg, phaseIngest, nil, "--phase", "ingest", "--dir", filepath.Join(root, "raw"), "--csv", rel,
		"--from", day.Format(extract.DateLayout), "--db", filepath.Join(root, "ingest.duckdb"))
	if err != nil {
		return out, err
	}
	ingest.Bytes = gen.Bytes
	if ingest.Seconds > 0 {
		ingest.Ratio = native.Seconds / ingest.Seconds
	}
	logf("%s: %.1f s, ratio to native %.2f", ingest.Name, ingest.Seconds, ingest.Ratio)
	out.Phases = append(out.Phases, native, ingest)
	for _, f := range []string{"native.duckdb", "ingest.duckdb"} {
		os.Remove(filepath.Join(root, f))
	}

	run, err := benchRun(ctx, cfg, sb, w, root)
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
		"--from", day.Format(extract.DateLayout), "--as-of", asOf.Format(time.RFC3339Nano), "--accounts", strings.Join(sb.Accounts(), ","))
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

// writeBenchCSV writes the window's RECON CSV to path.
func writeBenchCSV(sb *sandbox.Sandbox, w extract.Window, path string) (Phase, error) {
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
	rows, err := sb.WriteReport(bw, extract.ReportRecon, extract.FormatCSV, w)
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

// benchRun serves the sandbox on loopback and runs `recon run` over the
// window against it as a child process. It returns the run and then its
// stages, with the CPU and RSS sampled from /proc during each.
func benchRun(ctx context.Context, cfg BenchConfig, sb *sandbox.Sandbox, w extract.Window, root string) ([]Phase, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: sb.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	env := append(os.Environ(),
		"RECON_DB="+filepath.Join(root, "recon.duckdb"),
		"RECON_ARCHIVE_URL="+filepath.Join(root, "archive"),
		"RECON_WORK_DIR="+filepath.Join(root, "work"),
		"RECON_LOG_FORMAT=json", "RECON_CONFIG=")
	for _, kv := range cfg.Env(base, sb) {
		env = append(env, kv[0]+"="+kv[1])
	}
	logFile, err := os.Create(filepath.Join(root, "run.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	day := w.From.Format(extract.DateLayout)
	cmd := exec.CommandContext(ctx, cfg.Recon, "run", "--from", day, "--to", w.To.Format(extract.DateLayout))
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
	if err != nil {
		return nil, fmt.Errorf("recon run (log %s): %w", logFile.Name(), err)
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

// runStages reads the stages of the one run in a published database.
func runStages(db string) ([]stage, error) {
	d, err := OpenDB(db, true)
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
	d, err := OpenDB(db, true)
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
	d, err := OpenDB(db, true)
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
func child(ctx context.Context, cfg BenchConfig, name string, detail any, args ...string) (Phase, error) {
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

// PeakRSS is this process's peak resident set size in bytes (VmHWM), or 0
// where /proc does not say.
func PeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	_, hwm := statusRSS(b)
	return hwm
}

// statusRSS reads VmRSS and VmHWM (bytes) from a /proc/<pid>/status.
func statusRSS(status []byte) (rss, hwm int64) {
	for _, l := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if k == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	return rss, hwm
}

// selfCPU is the CPU time this process has used, all threads.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procSample is a child's CPU time, RSS and peak RSS so far at one instant.
type procSample struct {
	at       time.Time
	cpu      time.Duration
	rss, hwm int64 // bytes
}

type procSeries []procSample

// peakMiB is the highest peak RSS sampled.
func (s procSeries) peakMiB() float64 {
	var hwm int64
	for _, x := range s {
		hwm = max(hwm, x.hwm)
	}
	return float64(hwm) / (1 << 20)
}

// during returns the CPU seconds used and the highest RSS (MiB) sampled
// between from and to.
func (s procSeries) during(from, to time.Time) (cpu, rssMiB float64) {
	var first, last *procSample
	for i := range s {
		if s[i].at.Before(from) || s[i].at.After(to) {
			continue
		}
		if first == nil {
			first = &s[i]
		}
		last = &s[i]
		rssMiB = max(rssMiB, float64(s[i].rss)/(1<<20))
	}
	if first != nil {
		cpu = (last.cpu - first.cpu).Seconds()
	}
	return cpu, rssMiB
}

// sampleProc samples /proc/pid every 50 ms until the returned function is
// called, which returns the samples.
func sampleProc(pid int) func() procSeries {
	stop := make(chan struct{})
	var (
		mu     sync.Mutex
		series procSeries
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if s, ok := readProc(pid); ok {
				mu.Lock()
				series = append(series, s)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() procSeries {
		close(stop)
		wg.Wait()
		return series
	}
}

// readProc reads a process's CPU time (/proc/pid/stat) and RSS (/proc/pid/status).
func readProc(pid int) (procSample, bool) {
	s := procSample{at: time.Now()}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, false
	}
	// Fields after the command name (which may hold spaces): utime is 14th, stime 15th.
	i := strings.LastIndexByte(string(stat), ')')
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return s, false
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	s.cpu = time.Duration(ut+st) * time.Second / 100 // USER_HZ
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, false
	}
	s.rss, s.hwm = statusRSS(status)
	return s, true
}

// machine describes this machine.
func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %f kB", &kb); err == nil {
			m.MemoryGiB = kb / (1 << 20)
		}
	}
	if db, err := OpenDB("", false); err == nil {
		_ = db.QueryRow(`SELECT version()`).Scan(&m.DuckDB)
		db.Close()
	}
	return m
}

// PhaseOutput is what a child phase prints: the rows it handled, the
// seconds its measured work took, and any detail.
type PhaseOutput struct {
	Rows    int64           `json:"rows"`
	Seconds float64         `json:"seconds"`
	PeakRSS int64           `json:"peak_rss_bytes"` // of the whole process, from /proc (PeakRSS)
	Detail  json.RawMessage `json:"detail,omitempty"`
}

// BenchPhaseArgs names one phase Bench runs in a child process and its inputs.
type BenchPhaseArgs struct {
	Phase    string // native, ingest or rules
	CSV      string // native: the CSV's path; ingest: its path under Dir
	Dir      string // ingest: the raw folder
	DB       string // the database written (native, ingest) or judged (rules)
	Day      time.Time
	AsOf     time.Time // rules
	Accounts []string  // rules
}

// BenchPhase runs one measured phase in this process. Native and ingest
// load the CSV into a fresh, migrated database and checkpoint it (the
// migration is not timed); rules applies the catalogue to a loaded
// database over the day.
func BenchPhase(ctx context.Context, a BenchPhaseArgs) (PhaseOutput, error) {
	var out PhaseOutput
	db, err := OpenDB(a.DB, false)
	if err != nil {
		return out, err
	}
	defer db.Close()
	w, err := extract.NewWindow(a.Day, a.Day)
	if err != nil && a.Phase != "native" {
		return out, err
	}
	if a.Phase != "rules" {
		if _, err := reconsql.Migrate(ctx, db); err != nil {
			return out, err
		}
	}
	start := time.Now()
	switch a.Phase {
	case "native":
		// The engine at its best: DuckDB's default memory limit (80% of
		// memory), not recon's; with recon's, read_csv takes about twice as long.
		conn, err := db.Conn(ctx)
		if err != nil {
			return out, err
		}
		defer conn.Close()
		create, insert, err := NativeCSV(ctx, db, a.CSV)
		var limit string
		if err == nil {
			_, err = conn.ExecContext(ctx, "RESET memory_limit")
		}
		if err == nil { // RESET alone leaves the buffer pool at its old size
			err = conn.QueryRowContext(ctx, "SELECT current_setting('memory_limit')").Scan(&limit)
		}
		for _, q := range []string{"SET memory_limit = '" + limit + "'", create} {
			if err == nil {
				_, err = conn.ExecContext(ctx, q)
			}
		}
		var res sql.Result
		if err == nil {
			res, err = conn.ExecContext(ctx, insert)
		}
		if err == nil {
			_, err = conn.ExecContext(ctx, "CHECKPOINT")
		}
		if err == nil {
			out.Rows, err = res.RowsAffected()
		}
		if err != nil {
			return out, fmt.Errorf("native read_csv: %w", err)
		}
	case "ingest":
		files := []extract.RawFile{{Source: extract.SourceRecon, Format: extract.FormatCSV, Path: a.CSV,
			Window: w, Status: extract.StatusReady, ReportID: "bench"}}
		st, err := transform.NewLoader(db, a.Dir, "r-bench", nil).Load(ctx, files)
		if err != nil {
			return out, err
		}
		out.Rows = st.Rows(extract.SourceRecon)
	case "rules":
		catalogue, err := loadRules("")
		if err != nil {
			return out, err
		}
		res, err := rules.Apply(ctx, db, catalogue, rules.Run{ID: "r-bench", Window: w, AsOf: a.AsOf, Accounts: a.Accounts})
		if err != nil {
			return out, err
		}
		took := map[string]float64{}
		for id, d := range res.Took {
			took[id] = d.Seconds()
		}
		for _, n := range res.Found {
			out.Rows += n
		}
		if out.Detail, err = json.Marshal(took); err != nil {
			return out, err
		}
	default:
		return out, fmt.Errorf("unknown bench phase %q", a.Phase)
	}
	if a.Phase == "ingest" {
		if _, err := db.ExecContext(ctx, "CHECKPOINT"); err != nil {
			return out, err
		}
	}
	out.Seconds = time.Since(start).Seconds()
	out.PeakRSS = PeakRSS()
	return out, nil
}

// NativeCSV returns the statements that read a RECON CSV with DuckDB's own
// read_csv, each column typed as in recon_transactions, into a table
// "native" of those columns: the engine's own speed on the same file.
// db must be migrated.
func NativeCSV(ctx context.Context, db *sql.DB, path string) (create, insert string, err error) {
	types := map[string]string{}
	var defs []string
	rows, err := db.QueryContext(ctx, `SELECT column_name, data_type FROM duckdb_columns()
		WHERE table_name = 'recon_transactions' AND column_name NOT IN ('extra', 'report_id', 'source_file', 'source_line')
		ORDER BY column_index`)
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	for rows.Next() {
		var c, t string
		if err := rows.Scan(&c, &t); err != nil {
			return "", "", err
		}
		types[c] = t
		defs = append(defs, c+" "+t)
	}
	if err := rows.Err(); err != nil {
		return "", "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	header, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return "", "", fmt.Errorf("header of %s: %w", path, err)
	}
	var cols []string
	for _, h := range strings.Split(strings.TrimSpace(header), ",") {
		t, ok := types[h]
		if !ok {
			return "", "", fmt.Errorf("%s: column %q is not in recon_transactions", path, h)
		}
		cols = append(cols, fmt.Sprintf("'%s': '%s'", h, t))
	}
	return `CREATE TABLE native (` + strings.Join(defs, ", ") + `)`,
		fmt.Sprintf(`INSERT INTO native BY NAME SELECT * FROM read_csv('%s', header = true, auto_detect = false,
			delim = ',', quote = '"', escape = '"', columns = {%s})`, strings.ReplaceAll(path, "'", "''"), strings.Join(cols, ", ")), nil
}

// WriteTable prints the report as one table per size, then how time and
// peak RSS grew from the smallest size to the largest.
func (r *BenchReport) WriteTable(w io.Writer) error {
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs (%s), %.0f GiB, %s, %s, DuckDB %s\n", m.CPUs, m.Model, m.MemoryGiB, m.OS, m.Go, m.DuckDB)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, s := range r.Sizes {
		fmt.Fprintf(tw, "\n%d payments\tphase\trows\tMB\tseconds\trows/s\tMB/s\tratio\tCPU s\tpeak RSS MiB\t\n", s.Payments)
		for _, p := range s.Phases {
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t\n", p.Name, count(p.Rows), megabytes(p.Bytes), p.Seconds,
				rate(float64(p.Rows), p.Seconds), rate(mb(p.Bytes), p.Seconds), opt(p.Ratio, "%.2f"),
				opt(p.CPUSeconds, "%.1f"), opt(p.PeakRSSMiB, "%.0f"))
		}
	}
	if len(r.Sizes) > 1 {
		a, b := r.Sizes[0], r.Sizes[len(r.Sizes)-1]
		fmt.Fprintf(tw, "\ngrowth %d -> %d\tphase\ttime x\tpeak RSS x\t\n", a.Payments, b.Payments)
		for _, p := range a.Phases {
			q, ok := findPhase(b, p.Name)
			if !ok || p.Seconds == 0 {
				continue
			}
			fmt.Fprintf(tw, "\t%s\t%.1f\t%s\t\n", p.Name, q.Seconds/p.Seconds, ratioOpt(q.PeakRSSMiB, p.PeakRSSMiB))
		}
	}
	fmt.Fprintf(tw, "\ntotal\t%.0f s\t\n", r.Seconds)
	return tw.Flush()
}

// WriteJSON writes the report as indented JSON.
func (r *BenchReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func findPhase(s BenchSize, name string) (Phase, bool) {
	for _, p := range s.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return Phase{}, false
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func megabytes(b int64) string { return opt(mb(b), "%.0f") }

func count(n int64) string { return opt(float64(n), "%.0f") }

func rate(x, seconds float64) string {
	if x == 0 || seconds == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f", x/seconds)
}

func opt(x float64, format string) string {
	if x == 0 {
		return ""
	}
	return fmt.Sprintf(format, x)
}

func ratioOpt(a, b float64) string {
	if a == 0 || b == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", a/b)
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

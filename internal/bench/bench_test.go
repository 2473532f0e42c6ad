package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"recon/extract/raw"
	"recon/extract/sandbox"
)

// TestPhases generates a small RECON CSV and runs the native and ingest
// phases on it in this process: both load every row the sandbox wrote.
func TestPhases(t *testing.T) {
	day := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	sb, err := sandbox.New(sandbox.Config{Seed: seed, Start: day, Days: 1, PaymentsPerDay: 300, PendingPolls: -1,
		Now: func() time.Time { return day.AddDate(0, 0, 3) }})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := raw.NewWindow(day, day)
	dir := t.TempDir()
	rel := "reports/RECON/bench.csv"
	gen, err := writeCSV(sb, w, filepath.Join(dir, "raw", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	if gen.Rows == 0 || gen.Bytes == 0 {
		t.Fatalf("generated %d rows, %d bytes", gen.Rows, gen.Bytes)
	}
	for _, a := range []PhaseArgs{
		{Phase: "native", CSV: filepath.Join(dir, "raw", filepath.FromSlash(rel)), DB: filepath.Join(dir, "native.duckdb"), Day: day},
		{Phase: "native-auto", CSV: filepath.Join(dir, "raw", filepath.FromSlash(rel)), DB: filepath.Join(dir, "auto.duckdb"), Day: day},
		{Phase: "ingest", CSV: rel, Dir: filepath.Join(dir, "raw"), DB: filepath.Join(dir, "ingest.duckdb"), Day: day},
	} {
		out, err := RunPhase(t.Context(), a)
		if err != nil {
			t.Fatalf("%s: %v", a.Phase, err)
		}
		if out.Rows != gen.Rows {
			t.Errorf("%s loaded %d rows, want %d", a.Phase, out.Rows, gen.Rows)
		}
	}
	// The rules phase runs the built-in catalogue, or the rule files of a folder instead.
	own := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "rules", "recon_missing_in_ops.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, "recon_missing_in_ops.sql"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rules string
		min   int
	}{{"", 30}, {own, 1}} {
		out, err := RunPhase(t.Context(), PhaseArgs{Phase: "rules", DB: filepath.Join(dir, "ingest.duckdb"), Day: day,
			AsOf: day.AddDate(0, 0, 3), Rules: c.rules})
		if err != nil {
			t.Fatalf("rules %q: %v", c.rules, err)
		}
		var took map[string]float64
		if err := json.Unmarshal(out.Detail, &took); err != nil {
			t.Fatal(err)
		}
		if len(took) < c.min || (c.rules != "" && len(took) != 1) {
			t.Errorf("rules %q timed %d rules: %v", c.rules, len(took), took)
		}
	}
	if _, err := RunPhase(t.Context(), PhaseArgs{Phase: "nope", DB: filepath.Join(dir, "x.duckdb"), Day: day}); err == nil {
		t.Error("unknown phase: no error")
	}
}

func TestStatusRSS(t *testing.T) {
	status := "Name:\trecon\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nThreads:\t4\n"
	rss, hwm := statusRSS([]byte(status))
	if rss != 1024<<10 || hwm != 2048<<10 {
		t.Errorf("rss %d hwm %d, want %d %d", rss, hwm, 1024<<10, 2048<<10)
	}
}

// TestSeriesDuring: a stage's CPU is the difference between its first and
// last sample, its RSS the highest sampled inside it.
func TestSeriesDuring(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := procSeries{
		{at: t0, cpu: time.Second, rss: 1 << 20, hwm: 1 << 20},
		{at: t0.Add(time.Second), cpu: 2 * time.Second, rss: 5 << 20, hwm: 5 << 20},
		{at: t0.Add(2 * time.Second), cpu: 4 * time.Second, rss: 3 << 20, hwm: 5 << 20},
		{at: t0.Add(3 * time.Second), cpu: 9 * time.Second, rss: 8 << 20, hwm: 8 << 20},
	}
	cpu, rss := s.during(t0.Add(time.Second), t0.Add(2*time.Second))
	if cpu != 2 || rss != 5 {
		t.Errorf("during: cpu %v rss %v, want 2 5", cpu, rss)
	}
	if p := s.peakMiB(); p != 8 {
		t.Errorf("peak %v, want 8", p)
	}
}

// TestSampleProc samples this process: on Linux /proc answers, elsewhere nothing does.
func TestSampleProc(t *testing.T) {
	stop := sampleProc(os.Getpid())
	series := stop()
	if (len(series) > 0) != (PeakRSS() > 0) {
		t.Errorf("%d samples, peak RSS %d", len(series), PeakRSS())
	}
}

package pipeline_test

import (
	"math"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"recon/pipeline"
)

// TestRunLimitsGoMemory: a run works under recon's soft limit of Go's
// memory and puts the limit back after; a limit set before (GOMEMLIMIT)
// is kept. The run's clock reads the limit in force.
func TestRunLimitsGoMemory(t *testing.T) {
	e := newEnv(t, 1)
	for _, c := range []struct {
		name      string
		set, want int64
	}{
		{"no limit set", math.MaxInt64, 256 << 20},
		{"GOMEMLIMIT set", 1 << 30, 1 << 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(c.set))
			var during []int64
			cfg, clock := e.cfg, e.cfg.Now
			cfg.Now = func() time.Time {
				during = append(during, debug.SetMemoryLimit(-1))
				return clock()
			}
			if _, err := pipeline.Run(t.Context(), cfg, mustWindow(t, 0, 0)); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(during, c.want) || slices.ContainsFunc(during, func(l int64) bool { return l != c.set && l != c.want }) {
				t.Errorf("limits during the run: %v, want %d", slices.Compact(during), c.want)
			}
			if got := debug.SetMemoryLimit(-1); got != c.set {
				t.Errorf("limit after the run: %d, want %d", got, c.set)
			}
		})
	}
}

// TestExtractCollectsAtLimit: under recon's own memory limit, the extract
// works with GOGC's proportional collection off, and the run puts GOGC back
// after; a GOGC or a GOMEMLIMIT set by the user is kept throughout.
func TestExtractCollectsAtLimit(t *testing.T) {
	e := newEnv(t, 1)
	for _, c := range []struct {
		name  string
		limit int64
		gogc  string
		off   bool
	}{
		{"recon's limit", math.MaxInt64, "", true},
		{"GOGC set", math.MaxInt64, "100", false},
		{"GOMEMLIMIT set", 1 << 30, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", c.gogc)
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(c.limit))
			defer debug.SetGCPercent(debug.SetGCPercent(100))
			var (
				mu     sync.Mutex // the extract reads the clock from several goroutines
				during []int
			)
			cfg, clock := e.cfg, e.cfg.Now
			cfg.Now = func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				p := debug.SetGCPercent(-1) // reads it
				debug.SetGCPercent(p)
				during = append(during, p)
				return clock()
			}
			if _, err := pipeline.Run(t.Context(), cfg, mustWindow(t, 0, 0)); err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(during, -1); got != c.off {
				t.Errorf("collection off during the run: %v, want %v (GOGC seen: %v)", got, c.off, slices.Compact(during))
			}
			if !slices.Contains(during, 100) {
				t.Errorf("GOGC 100 never seen during the run: %v", slices.Compact(during))
			}
			p := debug.SetGCPercent(100)
			if p != 100 {
				t.Errorf("GOGC after the run: %d, want 100", p)
			}
		})
	}
}

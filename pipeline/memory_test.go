package pipeline_test

import (
	"math"
	"runtime/debug"
	"slices"
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

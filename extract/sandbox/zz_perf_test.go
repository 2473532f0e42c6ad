package sandbox_test

import (
	"io"
	"runtime"
	"testing"
	"time"

	"recon/extract"
	"recon/extract/sandbox"
)

type cw struct{ n int64 }

func (c *cw) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func TestPerf(t *testing.T) {
	s, _ := sandbox.New(sandbox.Config{Seed: 1, Start: day0, Days: 1, PaymentsPerDay: 1_000_000})
	w := window(t, "2026-10-01", "2026-10-01")
	for _, typ := range extract.ReportTypes {
		var c cw
		t0 := time.Now()
		n, err := s.WriteReport(&c, typ, "CSV", w)
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		t.Logf("%s rows=%d bytes=%d err=%v %v heap=%dMB", typ, n, c.n, err, time.Since(t0), m.HeapInuse>>20)
	}
	_ = io.Discard
}

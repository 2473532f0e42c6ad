package webhook_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"recon/extract/webhook"
)

// BenchmarkDeliveries1000 sends 1,000 concurrent deliveries per iteration
// over loopback, each on a new connection, to a receiver whose spool is a
// real file, and reports a delivery's latency seen by the client (p50,
// p99, max: connection set-up and queueing on loopback included), the
// receiver's own time per delivery (from its log line: body read, checks,
// spool append and fsync) and the deliveries per second. A measurement,
// not a test:
//
//	go test -run '^$' -bench Deliveries1000 -benchtime 5x ./extract/webhook/
func BenchmarkDeliveries1000(b *testing.B) {
	const n = 1000
	served := &durations{}
	url, _ := receiver(b, webhook.Config{Logger: slog.New(served)}, "", "")
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: false, MaxIdleConnsPerHost: 1000}, Timeout: time.Minute}
	var lat []time.Duration
	var elapsed time.Duration
	for b.Loop() {
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := time.Now()
		for range n {
			wg.Go(func() {
				body := `{"msg_id":"` + uuid.NewString() + `"}`
				t0 := time.Now()
				resp, err := c.Post(url, "application/json", strings.NewReader(body))
				d := time.Since(t0)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			})
		}
		wg.Wait()
		elapsed += time.Since(start)
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/1e6, "max-ms")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "deliveries/s")
	slices.Sort(served.d)
	b.ReportMetric(float64(served.d[len(served.d)/2])/1e6, "served-p50-ms")
	b.ReportMetric(float64(served.d[len(served.d)*99/100])/1e6, "served-p99-ms")
}

// durations is a slog handler that keeps the duration of each log line.
type durations struct {
	mu sync.Mutex
	d  []time.Duration
}

func (h *durations) Enabled(context.Context, slog.Level) bool { return true }
func (h *durations) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *durations) WithGroup(string) slog.Handler            { return h }
func (h *durations) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "duration" {
			h.mu.Lock()
			h.d = append(h.d, a.Value.Duration())
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

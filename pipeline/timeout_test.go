package pipeline_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"recon/extract/raw"
	"recon/output"
	"recon/pipeline"
)

// TestRunTimeout: a statement response sends its headers and a few bytes,
// then nothing. The run's deadline stops it: Run returns an incomplete run
// whose reason is the timeout, the writer lock is free, the metrics file says
// incomplete, the data are as before and the ledger holds the run as
// incomplete.
func TestRunTimeout(t *testing.T) {
	e := newEnv(t, 2)
	e.run(t, raw.Window{From: day0, To: day0})
	before := strings.Split(stateOf(t, e.cfg.DB), " | ")

	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/statement/") {
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusOK)
			rw.Write([]byte(`{"account_name": `))
			rw.(http.Flusher).Flush()
			<-r.Context().Done() // stalls until the client gives up
			return
		}
		e.sb.Handler().ServeHTTP(rw, r)
	}))
	defer srv.Close()
	cfg := e.cfg
	cfg.Extract.ServerURL = srv.URL + "/v4"
	cfg.RunTimeout = 300 * time.Millisecond
	cfg.MetricsFile = filepath.Join(t.TempDir(), "recon.prom")
	res, err := pipeline.Run(context.Background(), cfg, raw.Window{From: day0, To: day0.AddDate(0, 0, 1)})
	if err != nil {
		t.Fatalf("timed-out run: %v, want an incomplete run", err)
	}
	if res.Verdict != output.Incomplete || len(res.Reasons) == 0 ||
		!strings.HasPrefix(res.Reasons[len(res.Reasons)-1], "run timeout after 300ms: stopped in extract") {
		t.Fatalf("timed-out run: %s %q", res.Verdict, res.Reasons)
	}
	lock, err := pipeline.TryLock(pipeline.WriterLockPath(cfg.DB), "test", time.Now())
	if err != nil {
		t.Fatalf("writer lock after the timeout: %v", err)
	}
	lock.Release()
	m := metrics(t, cfg.MetricsFile)
	if m["recon_run_verdict"]["verdict=incomplete"] != 1 {
		t.Errorf("metrics verdict %v, want incomplete", m["recon_run_verdict"])
	}
	after := strings.Split(stateOf(t, cfg.DB), " | ")
	if after[0] != "2" || strings.Join(after[1:], " | ") != strings.Join(before[1:], " | ") {
		t.Errorf("after the timeout the database holds %q, want the data as before %q and one more run", after, before)
	}
	verdict, reasons, _ := ledger(t, cfg.DB, res.RunID)
	if verdict != output.Incomplete || !strings.Contains(reasons, "run timeout after 300ms") {
		t.Errorf("ledger: %s %s", verdict, reasons)
	}
	if left := workFiles(t, cfg.DB); len(left) != 0 {
		t.Errorf("working files left: %v", left)
	}
}

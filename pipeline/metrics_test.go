package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"recon/extract/raw"
	"recon/pipeline"
)

// metrics reads a Prometheus text file into name -> labels -> value, the
// labels written as k=v,k=v in name order.
func metrics(t *testing.T, path string) map[string]map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for name, fam := range fams {
		out[name] = map[string]float64{}
		for _, m := range fam.GetMetric() {
			out[name][labels(m)] = m.GetGauge().GetValue()
		}
	}
	return out
}

func labels(m *dto.Metric) string {
	s := ""
	for i, l := range m.GetLabel() {
		if i > 0 {
			s += ","
		}
		s += l.GetName() + "=" + l.GetValue()
	}
	return s
}

func TestMetricsFile(t *testing.T) {
	e := newEnv(t, 3)
	e.cfg.MetricsFile = filepath.Join(t.TempDir(), "recon.prom")
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 2))
	res := e.run(t, w)
	m := metrics(t, e.cfg.MetricsFile)

	verdicts := map[string]float64{"verdict=complete": 1, "verdict=incomplete": 0, "verdict=failed": 0}
	for k, v := range verdicts {
		if got := m["recon_run_verdict"][k]; got != v {
			t.Errorf("recon_run_verdict{%s} = %v, want %v", k, got, v)
		}
	}
	for source, n := range res.Loaded {
		if got := m["recon_run_rows_loaded"]["source="+source]; got != float64(n) {
			t.Errorf("rows of %s: %v, want %d", source, got, n)
		}
	}
	if len(res.Loaded) == 0 {
		t.Fatal("nothing loaded")
	}
	for _, stage := range []string{"extract", "load", "rules", "report", "total"} {
		if _, ok := m["recon_run_duration_seconds"]["stage="+stage]; !ok {
			t.Errorf("no duration of stage %s", stage)
		}
	}
	var open float64
	for _, v := range m["recon_open_breaks"] {
		open += v
	}
	var want int64
	if err := openRO(t, e.cfg.DB).QueryRow(`SELECT count(*) FROM breaks WHERE status <> 'resolved'`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if open != float64(want) || want == 0 {
		t.Errorf("open breaks in metrics %v, in the database %d", open, want)
	}
	if _, ok := m["recon_open_breaks"]["rule=ops_missing_in_recon,severity=P2"]; !ok {
		t.Errorf("no series for rule ops_missing_in_recon: %v", m["recon_open_breaks"])
	}
	success := m["recon_last_success_timestamp_seconds"][""]
	if success == 0 {
		t.Fatal("no last success")
	}

	// A failed run says so and keeps the last success and the open breaks.
	e.cfg.Extract.ClientSecret = "wrong"
	if _, err := pipeline.Run(context.Background(), e.cfg, w); err == nil {
		t.Fatal("run with a wrong secret succeeded")
	}
	m = metrics(t, e.cfg.MetricsFile)
	if m["recon_run_verdict"]["verdict=failed"] != 1 || m["recon_run_verdict"]["verdict=complete"] != 0 {
		t.Errorf("verdict after a failure: %v", m["recon_run_verdict"])
	}
	if got := m["recon_last_success_timestamp_seconds"][""]; got != success {
		t.Errorf("last success moved from %v to %v", success, got)
	}
	open = 0
	for _, v := range m["recon_open_breaks"] {
		open += v
	}
	if open != float64(want) {
		t.Errorf("open breaks after a failure %v, want %d", open, want)
	}
}

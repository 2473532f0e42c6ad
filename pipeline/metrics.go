package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"recon/output"
)

// VerdictFailed is the verdict in the metrics of a run that published nothing.
const VerdictFailed = "failed"

// writeMetrics writes the Prometheus text file of a finished run, published
// or not, for node_exporter's textfile collector: durations by stage, rows by
// source, quarantined rows and the verdict of this run; open breaks by rule
// and severity and the last success as the published file holds them.
func writeMetrics(ctx context.Context, cfg Config, res *Result, runErr error, started, finished time.Time) error {
	reg := prometheus.NewRegistry()
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		reg.MustRegister(g)
		return g
	}
	duration := gauge("recon_run_duration_seconds", "Duration of the last run by stage; stage=\"total\" is the whole run.", "stage")
	rows := gauge("recon_run_rows_loaded", "Rows the last run loaded, by source.", "source")
	quarantined := gauge("recon_run_quarantined_rows", "Rows the last run quarantined.")
	verdict := gauge("recon_run_verdict", "1 for the last run's verdict (complete, incomplete or failed), 0 for the others.", "verdict")
	lastRun := gauge("recon_last_run_timestamp_seconds", "End of the last run, published or not.")
	lastSuccess := gauge("recon_last_success_timestamp_seconds", "End of the last complete run in the published file.")
	open := gauge("recon_open_breaks", "Open (new or persisting) breaks in the published file, by rule and severity.", "rule", "severity")

	v := VerdictFailed
	if runErr == nil && res != nil {
		v = res.Verdict
	}
	for _, name := range []string{output.Complete, output.Incomplete, VerdictFailed} {
		verdict.WithLabelValues(name).Set(boolFloat(name == v))
	}
	duration.WithLabelValues("total").Set(finished.Sub(started).Seconds())
	lastRun.WithLabelValues().Set(float64(finished.Unix()))
	if res != nil {
		for source, n := range res.Loaded {
			rows.WithLabelValues(source).Set(float64(n))
		}
		quarantined.WithLabelValues().Set(float64(res.Quarantined))
	}
	for _, r := range cfg.catalogue {
		open.WithLabelValues(r.ID, r.Severity).Set(0)
	}

	if _, err := readLedger(cfg.DB, func(l Ledger) error {
		if runErr == nil && res != nil {
			stages, err := l.StageDurations(ctx, res.RunID)
			if err != nil {
				return err
			}
			for stage, d := range stages {
				duration.WithLabelValues(stage).Set(d.Seconds())
			}
		}
		counts, err := l.OpenByRule(ctx)
		if err != nil {
			return err
		}
		for _, c := range counts {
			open.WithLabelValues(c.Rule, c.Severity).Set(float64(c.Open))
		}
		at, ok, err := l.LastSuccess(ctx)
		if ok {
			lastSuccess.WithLabelValues().Set(float64(at.UnixMicro()) / 1e6)
		}
		return err
	}); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return prometheus.WriteToTextfile(cfg.MetricsFile, reg)
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

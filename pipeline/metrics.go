package pipeline

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
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

	if _, err := os.Stat(cfg.DB); errors.Is(err, fs.ErrNotExist) {
		return prometheus.WriteToTextfile(cfg.MetricsFile, reg)
	}
	db, err := OpenPublished(cfg.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	each := func(q string, args []any, fn func(*sql.Rows) error) error {
		r, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		defer r.Close()
		for r.Next() {
			if err := fn(r); err != nil {
				return fmt.Errorf("metrics: %w", err)
			}
		}
		return r.Err()
	}
	if runErr == nil && res != nil {
		if err := each(`SELECT stage, epoch(finished_at) - epoch(started_at) FROM run_stages WHERE run_id = ?`,
			[]any{res.RunID}, func(r *sql.Rows) error {
				var stage string
				var secs float64
				err := r.Scan(&stage, &secs)
				duration.WithLabelValues(stage).Set(secs)
				return err
			}); err != nil {
			return err
		}
	}
	if err := each(`SELECT rule_id, severity, count(*) FROM breaks WHERE status <> 'resolved' GROUP BY ALL`, nil,
		func(r *sql.Rows) error {
			var rule, severity string
			var n int64
			err := r.Scan(&rule, &severity, &n)
			open.WithLabelValues(rule, severity).Set(float64(n))
			return err
		}); err != nil {
		return err
	}
	if err := each(`SELECT epoch(max(finished_at)) FROM runs WHERE verdict = ? HAVING count(*) > 0`,
		[]any{output.Complete}, func(r *sql.Rows) error {
			var t float64
			err := r.Scan(&t)
			lastSuccess.WithLabelValues().Set(t)
			return err
		}); err != nil {
		return err
	}
	return prometheus.WriteToTextfile(cfg.MetricsFile, reg)
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

package output_test

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"recon/output"
	reconsql "recon/sql"
)

// BenchmarkStateHistory measures what one nightly run pays to save and
// archive the state it starts from (SaveInputs, Upload, the state cache),
// over a history of N nights of 10k synthetic payments a night, each night
// re-loading its day and the 7 re-check days before (so the run before it
// keeps one day). One op is one more night. cache=off is the cost before
// the state cache: every slice of the history written and hashed.
//
//	go test -tags duckdb_arrow -run '^$' -bench StateHistory -benchtime 3x ./output/
func BenchmarkStateHistory(b *testing.B) {
	for _, days := range []int{1, 30, 90} {
		for _, cache := range []bool{false, true} {
			b.Run(fmt.Sprintf("days=%d/cache=%t", days, cache), func(b *testing.B) { benchState(b, days, cache) })
		}
	}
}

func benchState(b *testing.B, days int, cache bool) {
	ctx := b.Context()
	db, err := reconsql.OpenDB(filepath.Join(b.TempDir(), "w.duckdb"), false)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := reconsql.Migrate(ctx, db); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE zz_payments (payment_id VARCHAR, day DATE, state VARCHAR, account VARCHAR,
		currency VARCHAR, amount DECIMAL(38,12), fee DECIMAL(38,12), executed_at TIMESTAMPTZ, detail VARCHAR, run_id VARCHAR)`); err != nil {
		b.Fatal(err)
	}
	store, err := output.NewDirStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	night := func(k int) { // run k re-loads days k-7..k: payments and breaks
		from, to := day0.AddDate(0, 0, k-7), day0.AddDate(0, 0, k)
		run := day0.AddDate(0, 0, k+1).Format(output.RunIDLayout)
		for _, q := range []string{
			`DELETE FROM zz_payments WHERE day BETWEEN $1 AND $2`,
			`INSERT INTO zz_payments SELECT 'p-' || d.day || '-' || i, d.day, 'EXECUTED', 'acct-' || (i % 7), 'USD',
				(i * 37 % 100000) / 100, i % 13 / 10, d.day + INTERVAL (i) SECOND, 'synthetic payment ' || i, $3
				FROM (SELECT CAST(range AS DATE) AS day FROM range($1::TIMESTAMP, $2::TIMESTAMP + INTERVAL 1 DAY, INTERVAL 1 DAY)) d, range(10000) t(i)`,
			`DELETE FROM breaks WHERE event_date BETWEEN $1 AND $2`,
			`INSERT INTO breaks (break_id, rule_id, severity, status, break_key, event_date, first_seen_run, first_seen_at, last_seen_run, age_days)
				SELECT 'b-' || d.day || '-' || i, 'R', 'P2', 'new', 'k' || i, d.day, $3, TIMESTAMPTZ '2026-01-01 00:00:00+00', $3, 0
				FROM (SELECT CAST(range AS DATE) AS day FROM range($1::TIMESTAMP, $2::TIMESTAMP + INTERVAL 1 DAY, INTERVAL 1 DAY)) d, range(20) t(i)`,
		} {
			if _, err := db.ExecContext(ctx, q, from, to, run); err != nil {
				b.Fatal(err)
			}
		}
	}
	var s output.Store
	if cache {
		s = store
	}
	k := 0
	archive := func() output.Manifest {
		runDir := b.TempDir()
		if _, err := output.SaveInputs(ctx, db, s, runDir, nil, false); err != nil {
			b.Fatal(err)
		}
		start := day0.AddDate(0, 0, k+1).Add(time.Hour)
		m, err := output.Archive(ctx, store, output.RunInfo{ID: fmt.Sprintf("r-%d", k), StartedAt: start}, runDir, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := output.SaveStateCache(ctx, db, store.URL(), runDir, m); err != nil {
			b.Fatal(err)
		}
		return m
	}
	for ; k < days; k++ {
		night(k)
	}
	if _, err := db.Exec(`CHECKPOINT`); err != nil {
		b.Fatal(err)
	}
	archive() // the night before: the archive and the cache hold its slices
	var cpu time.Duration
	var slicesN int
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		night(k)
		k++
		c0 := cpuTime()
		b.StartTimer()
		slicesN = len(archive().State)
		b.StopTimer()
		cpu += cpuTime() - c0
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu_s/op")
	b.ReportMetric(float64(slicesN), "slices")
	b.ReportMetric(float64(maxRSS())/(1<<20), "maxrss_MiB")
}

// cpuTime is the CPU time the process has used, all threads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSS is the process's peak resident set in bytes (Linux: ru_maxrss in KiB).
func maxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss << 10
}

//go:build unix

package transform_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"recon/extract/raw"
	"recon/internal/bench"
	reconsql "recon/sql"
	"recon/transform"
)

// BenchmarkReconCSV measures, side by side in one process, the load of one
// sandbox RECON CSV (RECON_BENCH_PAYMENTS payments in a day, default 100000,
// about 4.4 rows each) by DuckDB's native read_csv into a typed table of the
// same columns, and by recon's loader (parse, validate, quarantine, slice
// replace, provenance), and by plain read_csv with auto-detected types (the
// fastest DuckDB reads that file). Each side loads into a fresh file and
// checkpoints; the native sides run at DuckDB's default memory limit, as in
// make bench. It reports the rows per second and seconds of each side,
// recon's ratio to the typed (ratio) and to the auto-detected read
// (ratio_auto), and the CPU seconds each used per load (process CPU, all
// threads: on a busy machine the CPU figures are the steadier measure).
//
//	go test -tags duckdb_arrow ./transform/ -run '^$' -bench ReconCSV -benchtime 3x
func BenchmarkReconCSV(b *testing.B) {
	payments := 100000
	if v := os.Getenv("RECON_BENCH_PAYMENTS"); v != "" {
		var err error
		if payments, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	w, rows := reconReport(b, dir, 1, payments)
	path := filepath.Join(dir, "reports", "recon.csv")
	files := []raw.File{{Source: raw.SourceRecon, Format: raw.FormatCSV, Path: "reports/recon.csv",
		Window: w, Status: raw.StatusReady, ReportID: "bench"}}

	create, insert := nativeSQL(b, path)
	auto := fmt.Sprintf(`CREATE TABLE native_auto AS SELECT * FROM read_csv('%s')`, path)
	ctx := context.Background()
	// Each side: a name, and its load on a fresh migrated database.
	sides := []struct {
		name string
		load func(db *sql.DB) (int64, error)
	}{
		{"native", func(db *sql.DB) (int64, error) {
			if err := defaultMemoryLimit(db); err != nil {
				return 0, err
			}
			if _, err := db.ExecContext(ctx, create); err != nil {
				return 0, err
			}
			res, err := db.ExecContext(ctx, insert)
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		}},
		{"auto", func(db *sql.DB) (int64, error) {
			if err := defaultMemoryLimit(db); err != nil {
				return 0, err
			}
			if _, err := db.ExecContext(ctx, auto); err != nil {
				return 0, err
			}
			var n int64 // CREATE TABLE AS reports no rows affected
			err := db.QueryRowContext(ctx, `SELECT count(*) FROM native_auto`).Scan(&n)
			return n, err
		}},
		{"recon", func(db *sql.DB) (int64, error) {
			st, err := transform.NewLoader(db, dir, "r-bench", nil).Load(ctx, files)
			return st.Rows(raw.SourceRecon), err
		}},
	}
	wall := make([]time.Duration, len(sides))
	cpu := make([]time.Duration, len(sides))
	n := 0
	for b.Loop() {
		for i := range sides { // rotate which side goes first
			k := (n + i) % len(sides)
			c := cpuTime()
			wall[k] += timeLoad(b, filepath.Join(dir, fmt.Sprintf("%s-%d.duckdb", sides[k].name, n)), sides[k].load, int64(rows))
			cpu[k] += cpuTime() - c
		}
		n++
	}
	total := float64(rows) * float64(n)
	for k, s := range sides {
		b.ReportMetric(total/wall[k].Seconds(), s.name+"_rows/s")
		b.ReportMetric(cpu[k].Seconds()/float64(n), s.name+"_cpu_s")
		b.ReportMetric(wall[k].Seconds()/float64(n), s.name+"_s")
	}
	b.ReportMetric(wall[0].Seconds()/wall[2].Seconds(), "ratio")
	b.ReportMetric(wall[1].Seconds()/wall[2].Seconds(), "ratio_auto")
	b.ReportMetric(cpu[1].Seconds()/cpu[2].Seconds(), "cpu_ratio_auto")
}

// defaultMemoryLimit gives the database DuckDB's default memory limit (80%
// of memory) instead of recon's, as make bench's native reads have: the
// engine at its best.
func defaultMemoryLimit(db *sql.DB) error {
	var limit string
	if _, err := db.Exec("RESET memory_limit"); err != nil { // RESET alone leaves the buffer pool at its old size
		return err
	}
	if err := db.QueryRow("SELECT current_setting('memory_limit')").Scan(&limit); err != nil {
		return err
	}
	_, err := db.Exec("SET memory_limit = '" + limit + "'")
	return err
}

// cpuTime is the CPU time the process has used, all threads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timeLoad times load and a checkpoint on a fresh, migrated database file.
// Both sides load into a migrated file, so both pay for the same empty schema.
func timeLoad(b *testing.B, path string, load func(*sql.DB) (int64, error), want int64) time.Duration {
	b.Helper()
	db, err := reconsql.OpenDB(path, false)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := reconsql.Migrate(context.Background(), db); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	n, err := load(db)
	if err == nil {
		_, err = db.Exec("CHECKPOINT")
	}
	d := time.Since(start)
	if err != nil || n != want {
		b.Fatalf("loaded %d rows (%v), want %d", n, err, want)
	}
	return d
}

// nativeSQL returns make bench's statements for DuckDB's typed read of the
// CSV at path (bench.NativeCSV).
func nativeSQL(b *testing.B, path string) (create, insert string) {
	b.Helper()
	db, err := reconsql.OpenDB(filepath.Join(b.TempDir(), "types.duckdb"), false)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err = reconsql.Migrate(context.Background(), db); err == nil {
		create, insert, err = bench.NativeCSV(context.Background(), db, path)
	}
	if err != nil {
		b.Fatal(err)
	}
	return create, insert
}

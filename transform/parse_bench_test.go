package transform

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/extract/sandbox/sandboxtest"
	reconsql "recon/sql"
)

// extracted runs a sandbox day of 10,000 payments through Extract once and
// returns the raw folder and its files: the inputs of the parse and load
// benchmarks.
func extracted(b *testing.B) (string, []raw.File) {
	b.Helper()
	day := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	now := day.AddDate(0, 0, 3)
	srv := sandboxtest.Serve(b, sandbox.Config{Seed: 1, Start: day, Days: 1, PaymentsPerDay: 10_000, PendingPolls: -1,
		Now: func() time.Time { return now }})
	sb := srv.Sandbox
	c, err := extract.New(srv.ExtractConfig(extract.Config{Now: func() time.Time { return now }}))
	if err != nil {
		b.Fatal(err)
	}
	w, _ := raw.NewWindow(day, day)
	sw := raw.Window{From: day, To: day.AddDate(0, 0, 1)}
	dir := b.TempDir()
	res, err := c.Extract(context.Background(), extract.Request{Reports: w, Statements: sw, Accounts: sb.Accounts(),
		Liquidations: sw, Server: sw}, dir)
	if err != nil {
		b.Fatal(err)
	}
	return dir, res.Files
}

// BenchmarkParse measures the Go half of loading, per source: reading the
// raw files, validating every value and building the Arrow batches, without
// DuckDB. Metrics are per raw row (ns/row) and per raw byte (MB/s):
//
//	go test -tags duckdb_arrow ./transform/ -run '^$' -bench Parse -benchmem
func BenchmarkParse(b *testing.B) {
	dir, files := extracted(b)
	bySource := map[string][]raw.File{}
	for _, f := range files {
		if f.Path != "" {
			bySource[f.Source] = append(bySource[f.Source], f)
		}
	}
	l := &Loader{dir: dir}
	discard := func(rec arrow.RecordBatch) error { rec.Release(); return nil }
	cases := []struct {
		source string
		parse  func(fs []raw.File) (rows int64, err error)
	}{
		{raw.SourceRecon, func(fs []raw.File) (int64, error) {
			bl := newBuilder(&Recon, discard)
			defer bl.release()
			err := csvRows(l.path(fs[0]), fs[0].Path)(bl)
			if err == nil {
				err = bl.finish()
			}
			return bl.loaded[fs[0].Path], err
		}},
		{raw.SourcePayment, func(fs []raw.File) (int64, error) { // the payments and their four child tables
			p := newPaymentParser()
			defer p.release()
			for _, f := range fs {
				if err := p.page(l, f); err != nil {
					return 0, err
				}
			}
			var n int64 // payments: ns/row is per payment
			for _, f := range fs {
				n += p.bs[0].loaded[f.Path]
			}
			for _, bl := range p.bs {
				if err := bl.finish(); err != nil {
					return n, err
				}
			}
			return n, nil
		}},
		{raw.SourceLiquidation, func(fs []raw.File) (int64, error) {
			bs := make([]*builder, len(liquidationTables))
			for i, t := range liquidationTables {
				bs[i] = newBuilder(t, discard)
				defer bs[i].release()
			}
			var n int64
			for _, f := range fs {
				body, err := os.ReadFile(l.path(f))
				if err != nil {
					return n, err
				}
				if _, err := liquidationFileRows(bs, f.Path, body, map[string]bool{}); err != nil {
					return n, err
				}
				for _, bl := range bs {
					n += bl.loaded[f.Path]
				}
			}
			for _, bl := range bs {
				if err := bl.finish(); err != nil {
					return n, err
				}
			}
			return n, nil
		}},
	}
	for _, c := range cases {
		fs := bySource[c.source]
		var size int64
		for _, f := range fs {
			size += f.Size
		}
		b.Run("source="+c.source, func(b *testing.B) {
			b.SetBytes(size)
			var rows int64
			for b.Loop() {
				n, err := c.parse(fs)
				if err != nil {
					b.Fatal(err)
				}
				rows += n
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
}

// BenchmarkParseValue measures the validation of one amount and one timestamp.
func BenchmarkParseValue(b *testing.B) {
	b.Run("amount", func(b *testing.B) {
		for b.Loop() {
			if _, err := parseAmount("-1234567.890123"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("time", func(b *testing.B) {
		for b.Loop() {
			if _, err := parseTime("2026-10-01T12:34:56.789Z"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLoad measures Loader.Load per source (parse, stage, slice
// replace, provenance) into a fresh migrated database, with the CHECKPOINT.
func BenchmarkLoad(b *testing.B) {
	dir, files := extracted(b)
	for _, source := range []string{raw.SourceRecon, raw.SourcePaymentOps, raw.SourceStatement,
		raw.SourcePayment, raw.SourceLiquidation} {
		var fs []raw.File
		var size int64
		for _, f := range files {
			if f.Source == source {
				fs = append(fs, f)
				size += f.Size
			}
		}
		b.Run("source="+source, func(b *testing.B) {
			b.SetBytes(size)
			var rows int64
			n := 0
			for b.Loop() {
				b.StopTimer()
				db := benchDB(b, filepath.Join(b.TempDir(), "load.duckdb"))
				b.StartTimer()
				st, err := NewLoader(db, dir, "r-bench", nil).Load(context.Background(), fs)
				if err == nil {
					_, err = db.Exec("CHECKPOINT")
				}
				if err != nil {
					b.Fatal(err)
				}
				rows += st.Rows(source)
				n++
				b.StopTimer()
				db.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
}

// benchDB opens a fresh, migrated database at path with recon's settings.
func benchDB(b *testing.B, path string) *sql.DB {
	b.Helper()
	db, err := reconsql.OpenDB(path, false)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := reconsql.Migrate(context.Background(), db); err != nil {
		b.Fatal(err)
	}
	return db
}

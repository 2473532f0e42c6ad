package output_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"recon/output"
	reconsql "recon/sql"
)

// countingStore counts the objects put under the shared objects area.
type countingStore struct {
	output.Store
	objects atomic.Int64
}

func (s *countingStore) Put(ctx context.Context, key string, r io.Reader, size int64, sum string) error {
	if strings.HasPrefix(key, output.ObjectsDir) {
		s.objects.Add(1)
	}
	return s.Store.Put(ctx, key, r, size, sum)
}

// TestStateSlicesStoredOnce: the state is archived as slices shared by
// runs. A second run over an unchanged warehouse puts no slice again; a
// run after one more run's rows puts only that run's slice; what Fetch
// brings back restores the same tables.
func TestStateSlicesStoredOnce(t *testing.T) {
	ctx := t.Context()
	db, err := reconsql.OpenDB(filepath.Join(t.TempDir(), "w.duckdb"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE loaded (run_id VARCHAR, n INTEGER, amount DECIMAL(38,12))`,
		`CREATE TABLE breaks (event_date DATE, break_id VARCHAR, status VARCHAR, difference DECIMAL(38,12), last_seen_run VARCHAR)`,
		`CREATE TABLE settings (k VARCHAR)`, // no slice column, empty: one empty slice
		`INSERT INTO loaded SELECT 'r-1', i, i / 100 FROM range(1000) t(i)`,
		`INSERT INTO loaded SELECT 'r-2', i, i / 7 FROM range(500) t(i)`,
		`INSERT INTO breaks (event_date, break_id) VALUES (DATE '2026-09-30', 'a'), (DATE '2026-10-01', 'b'), (DATE '2026-10-02', 'c')`, // two months
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := output.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Store: dir}
	start := time.Date(2026, 10, 3, 1, 0, 0, 0, time.UTC)
	archive := func(id string) output.Manifest {
		t.Helper()
		runDir := t.TempDir()
		if _, err := output.SaveInputs(ctx, db, nil, runDir, nil, false); err != nil {
			t.Fatal(err)
		}
		start = start.Add(24 * time.Hour)
		m, err := output.Archive(ctx, store, output.RunInfo{ID: id, StartedAt: start}, runDir, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m1 := archive("r-a")
	if got := store.objects.Load(); got != 5 || len(m1.State) != 5 {
		t.Fatalf("first run: %d objects put, %d slices; want 5 (2 runs, 2 months of breaks, 1 empty table)", got, len(m1.State))
	}
	m2 := archive("r-b")
	if got := store.objects.Load(); got != 5 {
		t.Errorf("second run over the same state put %d objects again", got-5)
	}
	if len(m2.State) != 5 {
		t.Errorf("second run references %d slices, want 5", len(m2.State))
	}
	if _, err := db.Exec(`INSERT INTO loaded SELECT 'r-3', i, i FROM range(10) t(i)`); err != nil {
		t.Fatal(err)
	}
	m3 := archive("r-c")
	if got := store.objects.Load(); got != 6 {
		t.Errorf("third run put %d objects, want 1 (the new run's slice)", got-5)
	}

	// Fetch and restore the third run's state: the same rows.
	fetched := t.TempDir()
	if err := output.Fetch(ctx, dir, output.RunPrefix("r-c", start), m3, fetched); err != nil {
		t.Fatal(err)
	}
	db2, err := reconsql.OpenDB("", false)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	for _, q := range []string{
		`CREATE TABLE loaded (run_id VARCHAR, n INTEGER, amount DECIMAL(38,12))`,
		`CREATE TABLE breaks (event_date DATE, break_id VARCHAR, status VARCHAR, difference DECIMAL(38,12), last_seen_run VARCHAR)`, `CREATE TABLE settings (k VARCHAR)`,
	} {
		if _, err := db2.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := output.RestoreState(ctx, db2, fetched); err != nil {
		t.Fatal(err)
	}
	var n int64
	var sum string
	if err := db2.QueryRow(`SELECT count(*), CAST(sum(amount) AS VARCHAR) FROM loaded`).Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	var want string
	if err := db.QueryRow(`SELECT CAST(sum(amount) AS VARCHAR) FROM loaded`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if n != 1510 || sum != want {
		t.Errorf("restored %d rows summing %s, want 1510 summing %s", n, sum, want)
	}
}

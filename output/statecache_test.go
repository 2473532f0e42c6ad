package output_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"recon/output"
)

// cacheRun is one archived run of TestStateCache: the manifest with the
// cache, and the state slices the same warehouse gives without it.
type cacheRun struct {
	m       output.Manifest
	written int // state slices written into the run folder
	nocache []output.File
}

// TestStateCache: a slice whose rows did not change is referenced from the
// state cache, not written; any change of its rows makes it a miss, even
// with the same row count (one amount updated, or the same rows in another
// order), and so does its object missing from the archive. Whatever the
// cache does, the manifest's state is the one a run without cache gives,
// and it restores the warehouse.
func TestStateCache(t *testing.T) {
	ctx := t.Context()
	db := newDB(t)
	exec(t, db,
		`CREATE TABLE zz_loaded (run_id VARCHAR, n INTEGER, amount DECIMAL(38,12), tags VARCHAR[], wait INTERVAL)`,
		`INSERT INTO zz_loaded SELECT 'r-' || (i % 5), i, i / 100, ['a', 'b'], INTERVAL 1 DAY FROM range(5000) t(i)`,
		`INSERT INTO breaks (break_id, rule_id, severity, status, break_key, event_date, first_seen_run, first_seen_at, last_seen_run, age_days)
			VALUES ('b1', 'R', 'P1', 'new', 'k', DATE '2026-10-01', 'r-0', TIMESTAMPTZ '2026-10-01 00:00:00+00', 'r-0', 0)`)
	store, err := output.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 10, 3, 1, 0, 0, 0, time.UTC)
	var prev cacheRun
	archive := func(id string) cacheRun {
		t.Helper()
		var r cacheRun
		defer func() { prev = r }()
		plain := t.TempDir()
		if _, err := output.SaveInputs(ctx, db, nil, plain, nil, false); err != nil {
			t.Fatal(err)
		}
		runDir := t.TempDir()
		if _, err := output.SaveInputs(ctx, db, store, runDir, nil, false); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(runDir, "inputs", "state", "*", "*.parquet"))
		r.written = len(files)
		start = start.Add(24 * time.Hour)
		m0, err := output.Upload(ctx, discard{store}, output.RunInfo{ID: id + "-plain", StartedAt: start}, plain, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.nocache = m0.State
		if r.m, err = output.Archive(ctx, store, output.RunInfo{ID: id, StartedAt: start}, runDir, nil); err != nil {
			t.Fatal(err)
		}
		if err := output.SaveStateCache(ctx, db, store.URL(), runDir, r.m); err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(r.m.State, r.nocache, sameFile) {
			t.Errorf("%s: state with the cache differs from the state without:\n%v\n%v", id, r.m.State, r.nocache)
		}
		return r
	}
	first := archive("r-a")
	// No slice is written again, not even those of the tables the
	// reports read (breaks, break_events): they read BeforeDir.
	if second := archive("r-b"); second.written != 0 || len(second.m.State) != len(first.m.State) {
		t.Errorf("second run over the same warehouse wrote %d of %d slices, want 0", second.written, len(second.m.State))
	}

	miss := func(id, what string, q ...string) {
		t.Helper()
		before := prev
		exec(t, db, q...)
		r := archive(id)
		if r.written != 1 {
			t.Errorf("%s: %d slices written, want 1 (the changed one)", what, r.written)
		}
		changed := 0
		for i := range r.m.State {
			if r.m.State[i].SHA256 != before.m.State[i].SHA256 {
				changed++
			}
		}
		if changed != 1 {
			t.Errorf("%s: %d slices changed, want 1", what, changed)
		}
	}
	miss("r-c", "one amount updated", `UPDATE zz_loaded SET amount = amount + 1 WHERE n = 7`)
	miss("r-d", "same rows, another order", `CREATE TEMP TABLE moved AS SELECT * FROM zz_loaded WHERE n = 12`,
		`DELETE FROM zz_loaded WHERE n = 12`, `INSERT INTO zz_loaded SELECT * FROM moved`)
	miss("r-e", "an interval that hashes the same", `UPDATE zz_loaded SET wait = INTERVAL 1 MONTH WHERE n = 3`)
	miss("r-f", "then 30 days", `UPDATE zz_loaded SET wait = INTERVAL 30 DAY WHERE n = 3`)
	miss("r-g", "a list element", `UPDATE zz_loaded SET tags = ['a', NULL] WHERE n = 4`)

	// An object gone from the archive: the slice is written and put again.
	last := archive("r-h")
	f := last.m.State[slices.IndexFunc(last.m.State, func(f output.File) bool { return f.Path == "inputs/state/zz_loaded/000001.parquet" })]
	if err := os.Remove(filepath.Join(store.URL(), filepath.FromSlash(output.ObjectKey(f.SHA256)))); err != nil {
		t.Fatal(err)
	}
	if r := archive("r-i"); r.written != 1 {
		t.Errorf("object missing from the archive: %d slices written, want 1", r.written)
	}
	if _, err := os.Stat(filepath.Join(store.URL(), filepath.FromSlash(output.ObjectKey(f.SHA256)))); err != nil {
		t.Errorf("the missing object was not put again: %v", err)
	}

	// The last run's state, fetched, restores zz_loaded as it is.
	fetched := t.TempDir()
	if err := output.Fetch(ctx, store, output.RunPrefix("r-i", start), prev.m, fetched); err != nil {
		t.Fatal(err)
	}
	var same bool
	if err := db.QueryRow(`SELECT (SELECT list(t ORDER BY n) FROM zz_loaded t) =
		(SELECT list(t ORDER BY n) FROM read_parquet(?) t)`, filepath.Join(fetched, "inputs", "state", "zz_loaded", "*.parquet")).Scan(&same); err != nil {
		t.Fatal(err)
	}
	if !same {
		t.Error("the fetched state of zz_loaded differs from the warehouse")
	}
}

// discard is a store that takes nothing: Upload only describes the folder.
type discard struct{ output.Store }

func (discard) Has(context.Context, string, int64, string) (bool, error) { return true, nil }

func sameFile(a, b output.File) bool {
	return a.Path == b.Path && a.SHA256 == b.SHA256 && a.Size == b.Size && *a.Rows == *b.Rows
}

func exec(t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestSealedSaveInputs: over the end state SaveEndState stored, a sealed
// SaveInputs lists the slices an unsealed one fingerprints, in the same
// order, without reading the tables: after a row changes behind the seal
// it still lists the cache's slices. A table whose columns changed is
// fingerprinted.
func TestSealedSaveInputs(t *testing.T) {
	ctx := t.Context()
	db := newDB(t)
	exec(t, db,
		`CREATE TABLE zz_loaded (run_id VARCHAR, n INTEGER)`,
		`INSERT INTO zz_loaded SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE 'r-' || (i % 12) END, i FROM range(3000) t(i)`,
		`CREATE TABLE zz_other (n INTEGER)`, `INSERT INTO zz_other VALUES (1), (2)`)
	store, err := output.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := output.SaveEndState(ctx, db, store, t.TempDir(), ""); err != nil {
		t.Fatal(err)
	}
	refs := func(sealed bool) string {
		t.Helper()
		dir := t.TempDir()
		if _, err := output.SaveInputs(ctx, db, store, dir, nil, sealed); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, output.StateRefsName))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	read := refs(false)
	if got := refs(true); got != read {
		t.Errorf("sealed slices differ from the fingerprinted ones:\n%s\nwant\n%s", got, read)
	}
	exec(t, db, `ALTER TABLE zz_other ADD COLUMN m INTEGER`)
	altered := refs(false)
	if got := refs(true); altered == read || got != altered {
		t.Errorf("sealed slices of a table whose columns changed:\n%s\nwant\n%s", got, altered)
	}
	exec(t, db, `UPDATE zz_loaded SET n = -1 WHERE n = 5`)
	if got := refs(true); got != altered {
		t.Errorf("sealed slices after a change behind the seal differ from the cache's:\n%s", got)
	}
	if refs(false) == altered {
		t.Error("the fingerprinted slices missed the change")
	}
}

// TestScopedEndState: of a grown table, the end pass reads the run's own
// slices and those whose row count changed, and keeps the other slices'
// starting fingerprints; what it stores is what a full read gives, so a
// SaveInputs after it writes nothing. A report the run loaded again under
// its id (same rows, new amounts) is read: report_files makes it the run's.
func TestScopedEndState(t *testing.T) {
	ctx := t.Context()
	db := newDB(t)
	exec(t, db,
		`INSERT INTO payments (payment_id, source_file, source_line, run_id) SELECT 'p' || i, 'f', i, 'r-' || (i % 4) FROM range(400) t(i)`,
		`INSERT INTO recon_transactions (network_payment_id, report_id, source_file, source_line, sent_amount)
			SELECT 'p' || i, 'rep-' || (i % 3), 'f', i, i FROM range(300) t(i)`)
	store, err := output.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runDir := t.TempDir()
	if _, err := output.SaveInputs(ctx, db, store, runDir, nil, false); err != nil {
		t.Fatal(err)
	}
	exec(t, db, // run r-4: a re-load shrinks r-1's slice, appends its own, and loads rep-2 again
		`DELETE FROM payments WHERE run_id = 'r-1' AND source_line < 100`,
		`INSERT INTO payments (payment_id, source_file, source_line, run_id) SELECT 'p' || i, 'g', i, 'r-4' FROM range(100) t(i)`,
		`DELETE FROM recon_transactions WHERE report_id = 'rep-2'`,
		`INSERT INTO recon_transactions (network_payment_id, report_id, source_file, source_line, sent_amount)
			SELECT 'p' || i, 'rep-2', 'f', i, i + 1 FROM range(300) t(i) WHERE i % 3 = 2`,
		`INSERT INTO report_files (report_id, report_type, report_format, status, window_from, window_to, rows_loaded, rows_quarantined, run_id)
			VALUES ('rep-2', 'RECON', 'CSV', 'READY', '2026-10-01', '2026-10-02', 100, 0, 'r-4')`)
	es, err := output.SaveEndState(ctx, db, store, runDir, "r-4")
	if err != nil {
		t.Fatal(err)
	}
	// Unread: payments r-0, r-2, r-3; recon_transactions rep-0, rep-1.
	if kept := es.Slices - es.Hashed; kept != 5 {
		t.Errorf("the end pass kept %d of %d slices unread, want 5", kept, es.Slices)
	}
	if n, err := output.SaveInputs(ctx, db, store, t.TempDir(), nil, false); err != nil || n != 0 {
		t.Errorf("SaveInputs reading every table after the end pass wrote %d slices (%v), want 0: a kept fingerprint was stale", n, err)
	}
}

// TestReplaceStateCache: the state cache ends up holding exactly the slices
// given with a fingerprint and an object, of the one archive, each once
// (an entry held twice, given or not, included); an entry that stays is not
// rewritten (its rowid is kept).
func TestReplaceStateCache(t *testing.T) {
	ctx := t.Context()
	db := newDB(t)
	exec(t, db, `INSERT INTO state_cache VALUES
		('other', 'payments', 'r-1', 'fp', 'aa', 1, 1),
		('arch', 'payments', 'r-1', 'fp1', 'a1', 10, 2),
		('arch', 'payments', 'r-2', 'fp2', 'a2', 20, 3),
		('arch', 'payments', 'r-3', 'fp3', 'a3', 30, 4),
		('arch', 'known_values', NULL, 'fpk', 'ak', 5, 6),
		('arch', 'known_values', NULL, 'fpk', 'ak', 5, 6),
		('arch', 'payments', 'r-9', 'fp9', 'a9', 1, 1),
		('arch', 'payments', 'r-9', 'fp9', 'a9', 1, 1)`)
	var kept int64
	if err := db.QueryRow(`SELECT rowid FROM state_cache WHERE slice_value = 'r-1' AND archive = 'arch'`).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	refs := []output.CacheRef{
		{Table: "payments", Slice: s("r-1"), Fingerprint: "fp1", SHA: "a1", Size: 10, Rows: 2},  // stays
		{Table: "payments", Slice: s("r-2"), Fingerprint: "fp2b", SHA: "b2", Size: 21, Rows: 2}, // changed
		{Table: "payments", Slice: s("r-4"), Fingerprint: "fp4", SHA: "a4", Size: 40, Rows: 5},  // new
		{Table: "known_values", Fingerprint: "fpk", SHA: "ak", Size: 5, Rows: 6},                // was there twice
		{Table: "fees", Fingerprint: "fpf", SHA: "af", Size: 7, Rows: 1},                        // NULL slice, new
		{Table: "payments", Slice: s("r-5"), SHA: "a5", Size: 50, Rows: 1},                      // no fingerprint
		{Table: "payments", Slice: s("r-6"), Fingerprint: "fp6", Size: 60, Rows: 1},             // no object
	}
	if err := output.ReplaceStateCache(ctx, db, "arch", refs); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"arch fees <nil> fpf af 7 1",
		"arch known_values <nil> fpk ak 5 6",
		"arch payments r-1 fp1 a1 10 2",
		"arch payments r-2 fp2b b2 21 2",
		"arch payments r-4 fp4 a4 40 5",
	}
	var got []string
	rows, err := db.Query(`SELECT archive, table_name, slice_value, fingerprint, sha256, size, rows FROM state_cache ORDER BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var a, tb, fp, sha string
		var slice sql.NullString
		var size, n int64
		if err := rows.Scan(&a, &tb, &slice, &fp, &sha, &size, &n); err != nil {
			t.Fatal(err)
		}
		v := "<nil>"
		if slice.Valid {
			v = slice.String
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %s %d %d", a, tb, v, fp, sha, size, n))
	}
	if !slices.Equal(got, want) {
		t.Errorf("state cache:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var now int64
	if err := db.QueryRow(`SELECT rowid FROM state_cache WHERE slice_value = 'r-1'`).Scan(&now); err != nil {
		t.Fatal(err)
	}
	if now != kept {
		t.Errorf("the entry that stayed was rewritten: rowid %d, was %d", now, kept)
	}
}

package output

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
)

// StateRefsName is the file, in a run folder, where SaveInputs lists the
// state slices with their fingerprints, and the sha256 of those it took
// from the state cache instead of writing them. Upload reads it; it is not
// archived.
const StateRefsName = "state-slices.json"

// fingerprintFormat changes whenever the way slices are written or
// fingerprinted does, so older cache entries no longer match.
const fingerprintFormat = "f2"

// reportState are the tables whose state before the run the run's own
// reports read (changes.csv, the workflow before the run), with the columns
// they read: SaveInputs also writes those columns of every row into
// BeforeDir, so their slices, like every other table's, are written only
// when the archive does not hold them. Replay reads the same columns from
// the slices.
var reportState = map[string]string{
	"breaks":       "break_id, status, difference, last_seen_run",
	"break_events": "break_id, seq, workflow_status",
}

// stateRef is one slice of the state SaveInputs saved. SHA256, Size and
// Rows are set for a cache hit: the archive already holds its object.
type stateRef struct {
	Path        string  `json:"path"`
	Table       string  `json:"table"`
	Slice       *string `json:"slice"`
	Fingerprint string  `json:"fingerprint,omitempty"`
	SHA256      string  `json:"sha256,omitempty"`
	Size        int64   `json:"size,omitempty"`
	Rows        int64   `json:"rows,omitempty"`
	hashed      bool    // its rows were read to fingerprint it
}

// stateCache is what the state cache holds for one archive: the object of
// each slice, by cacheKey(table, slice, fingerprint), and the slices of
// each table in the order SaveInputs writes them.
type stateCache struct {
	objects map[string]File
	tables  map[string][]stateRef
}

// sealedRefs are the slices of table t as the cache lists them, for a
// state sealed as the cache's own (SaveInputs): ok is false unless the
// cache lists t and every slice has a fingerprint of base, the table's
// columns, types and DuckDB version as they are now.
func (c stateCache) sealedRefs(t, base string) ([]stateRef, bool) {
	refs := c.tables[t]
	for _, r := range refs {
		if !strings.HasPrefix(r.Fingerprint, base+"|") {
			return nil, false
		}
	}
	return slices.Clone(refs), len(refs) > 0
}

func cacheKey(table string, slice *string, fp string) string {
	s := "\x00null"
	if slice != nil {
		s = "\x01" + *slice
	}
	return table + "\x00" + s + "\x00" + fp
}

// hasTable reports whether main.t exists (a warehouse migrated before
// state_cache, or a test's hand-made schema, has none).
func hasTable(ctx context.Context, db *sql.DB, t string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables()
		WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $1`, t).Scan(&n)
	return n > 0, err
}

// loadStateCache reads the entries of the archive url from state_cache.
func loadStateCache(ctx context.Context, db *sql.DB, url string) (stateCache, error) {
	c := stateCache{objects: map[string]File{}, tables: map[string][]stateRef{}}
	if ok, err := hasTable(ctx, db, "state_cache"); err != nil || !ok {
		return c, err
	}
	// Ordered as fingerprints orders a table's slices, by DuckDB itself.
	rows, err := db.QueryContext(ctx, `SELECT table_name, slice_value, fingerprint, sha256, size, rows
		FROM state_cache WHERE archive = $1 ORDER BY table_name, slice_value NULLS FIRST`, url)
	if err != nil {
		return c, fmt.Errorf("read the state cache: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t, fp string
		var slice sql.NullString
		var f File
		var n int64
		if err := rows.Scan(&t, &slice, &fp, &f.SHA256, &f.Size, &n); err != nil {
			return c, err
		}
		f.Rows = &n
		var s *string
		if slice.Valid {
			s = &slice.String
		}
		c.objects[cacheKey(t, s, fp)] = f
		c.tables[t] = append(c.tables[t], stateRef{Table: t, Slice: s, Fingerprint: fp})
	}
	return c, rows.Err()
}

// SaveStateCache replaces the state cache of db with the slices of m, the
// manifest Upload returned for the run folder dir (whose StateRefsName
// gives their fingerprints), stored in the archive url. Call it only once
// Upload succeeded: an entry says the archive holds its object.
func SaveStateCache(ctx context.Context, db *sql.DB, url, dir string, m Manifest) error {
	if ok, err := hasTable(ctx, db, "state_cache"); err != nil || !ok {
		return err
	}
	refs, err := readStateRefs(dir)
	if err != nil {
		return err
	}
	var cached []stateRef
	for _, f := range m.State {
		r, ok := refs[f.Path]
		if !ok || r.Fingerprint == "" || f.Rows == nil {
			continue
		}
		r.SHA256, r.Size, r.Rows = f.SHA256, f.Size, *f.Rows
		cached = append(cached, r)
	}
	return replaceStateCache(ctx, db, url, cached)
}

// replaceStateCache makes the state cache of db hold refs, slices whose
// objects the archive url holds (SHA256 set), and nothing else: refs
// without a fingerprint are left out, and so are the entries of another
// archive. Only the entries that change are deleted and inserted, so a
// run rewrites those of its window, not the whole history's.
func replaceStateCache(ctx context.Context, db *sql.DB, url string, refs []stateRef) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := updateStateCache(ctx, tx, url, refs); err != nil {
		return fmt.Errorf("save the state cache: %w", err)
	}
	return tx.Commit()
}

// cacheEntry is a row of state_cache, without its archive.
type cacheEntry struct {
	table            string
	slice            sql.NullString
	fingerprint, sha string
	size, rows       int64
}

func (e cacheEntry) args() []any {
	return []any{e.table, e.slice, e.fingerprint, e.sha, e.size, e.rows}
}

// updateStateCache is replaceStateCache's work, in tx.
func updateStateCache(ctx context.Context, tx *sql.Tx, url string, refs []stateRef) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM state_cache WHERE archive <> $1`, url); err != nil {
		return err
	}
	wanted := map[cacheEntry]bool{}
	for _, r := range refs {
		if r.Fingerprint == "" || r.SHA256 == "" {
			continue
		}
		e := cacheEntry{table: r.Table, fingerprint: r.Fingerprint, sha: r.SHA256, size: r.Size, rows: r.Rows}
		if r.Slice != nil {
			e.slice = sql.NullString{String: *r.Slice, Valid: true}
		}
		wanted[e] = true
	}
	rows, err := tx.QueryContext(ctx, `SELECT table_name, slice_value, fingerprint, sha256, size, rows FROM state_cache`)
	if err != nil {
		return err
	}
	held := map[cacheEntry]int{} // how many times the cache holds each entry
	for rows.Next() {
		var e cacheEntry
		if err := rows.Scan(&e.table, &e.slice, &e.fingerprint, &e.sha, &e.size, &e.rows); err != nil {
			rows.Close()
			return err
		}
		held[e]++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// An entry held once and wanted stays as it is; any other goes, every
	// copy, and comes back once if wanted.
	var gone, added [][]any
	for e, n := range held {
		if n > 1 || !wanted[e] {
			gone = append(gone, e.args())
		}
	}
	for e := range wanted {
		if held[e] != 1 {
			added = append(added, append([]any{url}, e.args()...))
		}
	}
	if err := inBatches(ctx, tx, `DELETE FROM state_cache c USING (VALUES %s) g(t, v, f, h, s, n)
		WHERE c.table_name = g.t AND c.slice_value IS NOT DISTINCT FROM g.v AND c.fingerprint = g.f
			AND c.sha256 = g.h AND c.size = g.s AND c.rows = g.n`, gone); err != nil {
		return err
	}
	return inBatches(ctx, tx, `INSERT INTO state_cache VALUES %s`, added)
}

// inBatches runs query, whose %s takes a VALUES list, on rows 500 at a
// time: one statement per row costs more than the rest of the cache.
func inBatches(ctx context.Context, tx *sql.Tx, query string, rows [][]any) error {
	for len(rows) > 0 {
		n := min(len(rows), 500)
		marks := make([]string, n)
		var args []any
		for i, r := range rows[:n] {
			marks[i] = "(" + strings.TrimSuffix(strings.Repeat("?, ", len(r)), ", ") + ")"
			args = append(args, r...)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(query, strings.Join(marks, ", ")), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// writeStateRefs writes refs into dir/StateRefsName.
func writeStateRefs(dir string, refs []stateRef) error {
	b, err := json.MarshalIndent(refs, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, StateRefsName), append(b, '\n'), 0o644)
}

// readStateRefs reads dir/StateRefsName by path; none if it is missing (a
// run folder written before the state cache).
func readStateRefs(dir string) (map[string]stateRef, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateRefsName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var refs []stateRef
	if err := json.Unmarshal(b, &refs); err != nil {
		return nil, fmt.Errorf("read %s: %w", StateRefsName, err)
	}
	out := make(map[string]stateRef, len(refs))
	for _, r := range refs {
		out[r.Path] = r
	}
	return out, nil
}

// fingerprints are the slices of table t, in the order SaveInputs writes
// them, with the fingerprint of each: the fingerprint format and DuckDB
// version, the table's columns and types, the row count, and three hash
// aggregates of one hash of each row: its xor and sum (content), and
// sum(h·rowid) − min(rowid)·sum(h) (the rows' order within the slice,
// unchanged when a checkpoint renumbers the row ids by a constant). Equal
// fingerprints mean the same rows in the same order, so the same Parquet
// bytes. A table whose types hash() does not tell apart byte for byte gets
// no fingerprints (""). A non-nil only (never empty) limits them to the
// slices of those values.
func fingerprints(ctx context.Context, db *sql.DB, version, t, value string, cols []column, only []string) ([]stateRef, error) {
	base, hashed, ok := fingerprintBase(version, cols)
	var q string
	where, args := "", []any(nil)
	if only != nil && value != "" {
		marks := make([]string, len(only))
		for i, v := range only {
			marks[i], args = fmt.Sprintf("$%d", i+1), append(args, v)
		}
		// A semi join, not IN (list): DuckDB filters a list of several
		// values after the scan, which then reads the hashed columns of
		// every row of the table; the join's filter reaches the scan, which
		// reads them for the matching rows only (docs/archive.md).
		where = fmt.Sprintf(" WHERE %s IN (SELECT * FROM (VALUES (%s)))", value, strings.Join(marks, "), ("))
	}
	switch {
	case !ok && value == "":
		return []stateRef{{Table: t}}, nil
	case !ok:
		q = fmt.Sprintf(`SELECT DISTINCT %[1]s AS v, 0, '', '', '' FROM main.%[2]s%[3]s ORDER BY v NULLS FIRST`, value, ident(t), where)
	default:
		v, group := "NULL::VARCHAR", ""
		if value != "" {
			v, group = value, " GROUP BY v ORDER BY v NULLS FIRST"
		}
		q = fmt.Sprintf(`SELECT any_value(v), count(*), CAST(coalesce(bit_xor(h), 0) AS VARCHAR), CAST(coalesce(sum(h), 0) AS VARCHAR),
			CAST(coalesce(sum(CAST(h >> 24 AS HUGEINT) * rowid) - min(rowid) * sum(CAST(h >> 24 AS HUGEINT)), 0) AS VARCHAR)
			FROM (SELECT %[1]s AS v, rowid, hash(%[2]s) AS h FROM main.%[3]s%[5]s)%[4]s`,
			v, hashed, ident(t), group, where)
	}
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	defer rows.Close()
	var out []stateRef
	for rows.Next() {
		var v sql.NullString
		var n int64
		var x, s, o string
		if err := rows.Scan(&v, &n, &x, &s, &o); err != nil {
			return nil, err
		}
		r := stateRef{Table: t, hashed: true}
		if v.Valid {
			r.Slice = &v.String
		}
		if ok {
			r.Fingerprint = fingerprintRows(base, n) + x + "|" + s + "|" + o
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 && only == nil { // an empty table: one empty slice
		r := stateRef{Table: t, hashed: true}
		if ok {
			r.Fingerprint = base + "|0"
		}
		out = append(out, r)
	}
	return out, nil
}

// fingerprintRows is how a fingerprint of a slice of n rows begins (the
// end pass compares it with a slice's count).
func fingerprintRows(base string, n int64) string { return fmt.Sprintf("%s|%d|", base, n) }

// column is a column of a table and its DuckDB type.
type column struct{ name, typ string }

// unhashable are parts of type names whose values hash() treats as equal
// while their Parquet bytes differ (-0.0 and 0.0, '1 month' and '30 days',
// time zones of a TIMETZ), or that are not checked: a table with such a
// column is written every run.
var unhashable = []string{"FLOAT", "DOUBLE", "REAL", "INTERVAL", "TIME WITH TIME ZONE", "TIMETZ", "MAP(", "UNION(", "ENUM(", "BIT", "VARINT", "BIGNUM"}

// fingerprintBase is the part of the fingerprints common to a table's
// slices and the SQL list of the table's columns to hash; ok is false when
// a column's type cannot be fingerprinted. A top-level INTERVAL is hashed
// as its text.
func fingerprintBase(version string, cols []column) (string, string, bool) {
	if version == "" || len(cols) == 0 {
		return "", "", false
	}
	var sig, hashed []string
	for _, c := range cols {
		e := ident(c.name)
		if c.typ == "INTERVAL" {
			e = "CAST(" + e + " AS VARCHAR)"
		} else if containsAny(c.typ, unhashable) {
			return "", "", false
		}
		sig = append(sig, c.name+" "+c.typ)
		hashed = append(hashed, e)
	}
	return fingerprintFormat + "|" + version + "|" + SHA256([]byte(strings.Join(sig, ","))), strings.Join(hashed, ", "), true
}

func containsAny(s string, parts []string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// cacheHits sets SHA256, Size and Rows of the refs found in cache whose
// object store still has (Has, at most uploads checks at once; not asked
// when trusted).
func cacheHits(ctx context.Context, store Store, cache stateCache, trusted bool, refs []stateRef) error {
	if store == nil || len(cache.objects) == 0 {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(uploads)
	for i := range refs {
		r := &refs[i]
		f, ok := cache.objects[cacheKey(r.Table, r.Slice, r.Fingerprint)]
		if r.Fingerprint == "" || !ok || len(f.SHA256) != 64 {
			continue
		}
		if trusted {
			r.SHA256, r.Size, r.Rows = f.SHA256, f.Size, *f.Rows
			continue
		}
		g.Go(func() error {
			// An object the archive lost, or cannot be asked about, is a
			// miss: the slice is written, and Upload puts it.
			if has, err := store.Has(gctx, ObjectKey(f.SHA256), f.Size, f.SHA256); err != nil || !has {
				return nil
			}
			r.SHA256, r.Size, r.Rows = f.SHA256, f.Size, *f.Rows
			return nil
		})
	}
	return g.Wait()
}

package output

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"recon/rules"
	reconsql "recon/sql"
)

// Folders of a run's inputs besides the raw files: the warehouse state the
// run started from, and the rule files it ran. Replay needs both, since rules
// read every loaded source (not only this run's files) and the break
// lifecycle continues from the previous runs.
const (
	InputsDir = "inputs"
	StateDir  = "inputs/state"
	RulesDir  = "inputs/rules"
)

// ObjectsDir is the archive's shared area of content-addressed objects: a
// run's state slices, each stored once as objects/sha256/ab/<sha256>.parquet
// and referenced from the manifests of every run whose state holds it.
const ObjectsDir = "objects/sha256/"

// BeforeDir holds, in a run folder, the tables of reportState as the run
// found them (the columns the reports read), one Parquet file each, for the
// run's own reports (changes.csv, the workflow before the run). It is not
// archived: replay reads the same rows from the state slices.
const BeforeDir = "state-before"

// ObjectKey is the archive key of the state slice with the hex sha256 sum.
func ObjectKey(sum string) string {
	return ObjectsDir + sum[:2] + "/" + sum + ".parquet"
}

// stateSlice is the local path of a state slice in a run folder:
// inputs/state/<table>/<position>.parquet (the old layout, one file per
// table, is inputs/state/<table>.parquet).
var stateSlice = regexp.MustCompile(`^inputs/state/[a-z0-9_]+/[0-9]{6}\.parquet$`)

// ledgerTables describe runs (and the state cache) rather than data; they
// are not part of a run's state.
var ledgerTables = map[string]bool{"runs": true, "run_stages": true, "schema_version": true, "state_cache": true}

// sliceColumns are the columns a table's state is sliced by, first found
// first, with the SQL of a slice's value: the run that loaded a row, the
// report generation it came from, the month of a break's day. Rows no later
// run touches stay in the same slice with the same bytes run after run, so
// the archive stores them once. A table with none of them is one slice.
// Breaks go by month, not day: a run re-ages every open break, so each of
// their slices is written again every night, and months keep that count
// small after a year of history.
var sliceColumns = []struct{ name, value string }{
	{"run_id", `CAST("run_id" AS VARCHAR)`},
	{"report_id", `CAST("report_id" AS VARCHAR)`},
	{"event_date", `strftime("event_date", '%Y-%m')`},
}

// stateParquet is how state is written. On the 1M day's tables, zstd at
// level 1 wrote about 20% faster than its default level 3, and 2-5% smaller;
// row groups of 30,720 rows (a quarter of the default) took 50-260 MB less
// memory, halved the payments' time and grew files under 1%. The break
// reports keep the defaults: replay compares their bytes.
const stateParquet = `(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 30720)`

// SaveInputs writes, under runDir, the warehouse state (every table but the
// ledger) in slices, inputs/state/<table>/<position>.parquet, and the rule
// files as inputs/rules/<file>, and returns how many slices it wrote (the
// others were cache hits). Call it before the run loads anything.
// A slice holds the rows of one value of the table's slice column, in no
// fixed order (written unordered, on every core); slices come in the order
// of that value (run ids sort by time), which RestoreState keeps. An empty table is one
// empty slice.
//
// A slice whose fingerprint matches an entry of the state cache (table
// state_cache, for store's archive) whose object store still has is not
// written: StateRefsName lists it with its object's sha256, and Upload
// references that object. The columns of reportState's tables that the
// run's reports read are also written, every row, into BeforeDir (not
// archived). A nil store uses no cache.
//
// sealed says that db's state is the one the state cache describes: the end
// state SaveEndState stored, unchanged since (pipeline's seal of the
// published file). Then the slices and their fingerprints are the cache's,
// and the tables are not read to fingerprint them; a table the cache does
// not describe under its current columns is fingerprinted.
func SaveInputs(ctx context.Context, db *sql.DB, store Store, runDir string, catalogue []rules.Rule, sealed bool) (int, error) {
	if err := os.MkdirAll(filepath.Join(runDir, filepath.FromSlash(RulesDir)), 0o755); err != nil {
		return 0, err
	}
	tables, refs, err := writeState(ctx, db, store, runDir, false, sealed, nil)
	if err != nil {
		return 0, err
	}
	if err := writeStateRefs(runDir, refs); err != nil {
		return 0, err
	}
	if err := saveBefore(ctx, db, runDir, tables); err != nil {
		return 0, err
	}
	for _, r := range catalogue {
		if err := os.WriteFile(filepath.Join(runDir, filepath.FromSlash(RulesDir), path.Base(r.File)), []byte(r.Text), 0o644); err != nil {
			return 0, fmt.Errorf("save rule %s: %w", r.ID, err)
		}
	}
	written := 0
	for _, r := range refs {
		if r.SHA256 == "" {
			written++
		}
	}
	return written, nil
}

// writeState fingerprints every table of the state of db and writes, under
// dir, the slices the state cache of store's archive does not hold; it
// returns the tables and every slice, a hit with its object's sha256. A
// hit's object is checked with Has unless trusted says the cache's entries
// were just stored. sealed takes the slices from the cache (SaveInputs);
// scope reads only the slices the run may have changed (SaveEndState). A
// nil store uses no cache.
func writeState(ctx context.Context, db *sql.DB, store Store, dir string, trusted, sealed bool, scope *endScope) ([]string, []stateRef, error) {
	tables, err := stateTables(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	var cache stateCache
	if store != nil {
		if cache, err = loadStateCache(ctx, db, store.URL()); err != nil {
			return nil, nil, err
		}
	}
	cols, err := allColumns(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	var version string
	if err := db.QueryRowContext(ctx, `SELECT library_version FROM pragma_version()`).Scan(&version); err != nil {
		return nil, nil, fmt.Errorf("DuckDB version: %w", err)
	}
	byTable := make([][]stateRef, len(tables))
	err = reconsql.Unordered(ctx, db, func() error { // slices are fingerprinted and restored as sets
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(stateWriters)
		for i, t := range tables {
			g.Go(func() error {
				r, err := saveTable(gctx, db, store, cache, trusted, sealed, scope, version, t, cols[t], dir)
				if err != nil {
					return fmt.Errorf("save the state of %s: %w", t, err)
				}
				byTable[i] = r
				return nil
			})
		}
		return g.Wait()
	})
	return tables, slices.Concat(byTable...), err
}

// stateWriters is how many tables writeState saves at once, each on a
// connection of its own: a night's slices are small, and one COPY of a
// few thousand rows keeps about one core busy.
const stateWriters = 2

// saveTable writes the slices of table t into runDir but the cache hits,
// and returns them all.
func saveTable(ctx context.Context, db *sql.DB, store Store, cache stateCache, trusted, sealed bool, scope *endScope, version, t string, cols []column, runDir string) ([]stateRef, error) {
	dir := path.Join(StateDir, t)
	if err := os.MkdirAll(filepath.Join(runDir, filepath.FromSlash(dir)), 0o755); err != nil {
		return nil, err
	}
	col, value := sliceColumn(cols)
	refs, ok := []stateRef(nil), false
	if base, _, hashable := fingerprintBase(version, cols); sealed && hashable {
		refs, ok = cache.sealedRefs(t, base)
	}
	if !ok {
		var err error
		if refs, err = scope.fingerprints(ctx, db, version, t, col, value, cols); err != nil {
			return nil, err
		}
	}
	if err := cacheHits(ctx, store, cache, trusted, refs); err != nil {
		return nil, err
	}
	for i := range refs {
		r := &refs[i]
		r.Path = fmt.Sprintf("%s/%06d.parquet", dir, i)
		if r.SHA256 != "" {
			continue
		}
		where, args := "", []any(nil)
		switch {
		case len(refs) == 1 && r.Slice == nil:
			// the whole table: no slice column, or every row NULL, or none
		case r.Slice == nil:
			where = ` WHERE ` + value + ` IS NULL`
		default:
			where, args = ` WHERE `+value+` = $1`, []any{*r.Slice}
		}
		p := filepath.Join(runDir, filepath.FromSlash(r.Path))
		if _, err := db.ExecContext(ctx, fmt.Sprintf(`COPY (SELECT * FROM main.%s%s) TO %s `+stateParquet,
			ident(t), where, sqlString(p)), args...); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// saveBefore writes the tables of reportState, the columns the reports
// read of every row, each in one file, into runDir/BeforeDir: the run's
// reports read them there, so their state slices need not be written when
// the archive already holds them.
func saveBefore(ctx context.Context, db *sql.DB, runDir string, tables []string) error {
	if err := os.MkdirAll(filepath.Join(runDir, BeforeDir), 0o755); err != nil {
		return err
	}
	for _, t := range tables {
		cols, ok := reportState[t]
		if !ok {
			continue
		}
		p := filepath.Join(runDir, BeforeDir, t+".parquet")
		if _, err := db.ExecContext(ctx, fmt.Sprintf(`COPY (SELECT %s FROM main.%s) TO %s `+stateParquet,
			cols, ident(t), sqlString(p))); err != nil {
			return fmt.Errorf("save %s before the run: %w", t, err)
		}
	}
	return nil
}

// allColumns are the columns of every table of main with their types, in
// order, by table: one query for the whole state.
func allColumns(ctx context.Context, db *sql.DB) (map[string][]column, error) {
	rows, err := db.QueryContext(ctx, `SELECT table_name, column_name, data_type FROM duckdb_columns()
		WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name, column_index`)
	if err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	defer rows.Close()
	out := map[string][]column{}
	for rows.Next() {
		var t string
		var c column
		if err := rows.Scan(&t, &c.name, &c.typ); err != nil {
			return nil, err
		}
		out[t] = append(out[t], c)
	}
	return out, rows.Err()
}

// sliceColumn is the first of sliceColumns that cols hold, with the SQL
// of its slice value; "", "" if none.
func sliceColumn(cols []column) (name, value string) {
	for _, c := range sliceColumns {
		if slices.ContainsFunc(cols, func(x column) bool { return x.name == c.name }) {
			return c.name, c.value
		}
	}
	return "", ""
}

// StateFiles are the Parquet files of table t's state in a run folder, in
// the order to load them: its slices, or its one file in the layout of runs
// archived before slices (inputs/state/<table>.parquet).
func StateFiles(runDir, t string) ([]string, error) {
	old := filepath.Join(runDir, filepath.FromSlash(StateDir), t+".parquet")
	if _, err := os.Stat(old); err == nil {
		return []string{old}, nil
	}
	files, err := filepath.Glob(filepath.Join(runDir, filepath.FromSlash(StateDir), t, "*.parquet"))
	slices.Sort(files)
	return files, err
}

// RestoreState loads the tables saved by SaveInputs under runDir into db,
// whose schema must already be migrated: each table's slices, or its one
// file of the old layout, as one set of rows. Nothing reads the order of a
// restored table's rows (SaveInputs writes a slice unordered too), so they
// are inserted unordered, on every core.
func RestoreState(ctx context.Context, db *sql.DB, runDir string) error {
	entries, err := os.ReadDir(filepath.Join(runDir, filepath.FromSlash(StateDir)))
	if err != nil {
		return fmt.Errorf("restore state: %w", err)
	}
	have, err := stateTables(ctx, db)
	if err != nil {
		return err
	}
	return reconsql.Unordered(ctx, db, func() error { return restoreTables(ctx, db, runDir, entries, have) })
}

// restoreTables restores the state of each table entries names.
func restoreTables(ctx context.Context, db *sql.DB, runDir string, entries []os.DirEntry, have []string) error {
	for _, e := range entries {
		t := strings.TrimSuffix(e.Name(), ".parquet")
		if !slices.Contains(have, t) {
			return fmt.Errorf("restore state: table %s is not in this version's schema", t)
		}
		files, err := StateFiles(runDir, t)
		if err != nil {
			return err
		}
		if len(files) == 0 {
			continue
		}
		list := make([]string, len(files))
		for i, f := range files {
			list[i] = sqlString(f)
		}
		if _, err := db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO main.%s BY NAME SELECT * FROM read_parquet([%s])`,
			ident(t), strings.Join(list, ", "))); err != nil {
			return fmt.Errorf("restore the state of %s: %w", t, err)
		}
	}
	return nil
}

// stateList is the SQL list of the Parquet files of table t's state in
// runDir: its file in BeforeDir when the run wrote one, else its slices.
func stateList(runDir, t string) (string, error) {
	files, err := beforeFiles(runDir, t)
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("no state of %s in %s", t, runDir)
	}
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = sqlString(f)
	}
	return "[" + strings.Join(q, ", ") + "]", nil
}

// beforeFiles is the file of table t in runDir/BeforeDir, if SaveInputs
// wrote it there (a run, not a replay), else StateFiles.
func beforeFiles(runDir, t string) ([]string, error) {
	p := filepath.Join(runDir, BeforeDir, t+".parquet")
	if _, err := os.Stat(p); err == nil {
		return []string{p}, nil
	}
	return StateFiles(runDir, t)
}

func stateTables(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM duckdb_tables()
		WHERE database_name = current_database() AND schema_name = 'main' AND NOT temporary ORDER BY table_name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		if !ledgerTables[t] {
			out = append(out, t)
		}
	}
	return out, rows.Err()
}

// ident quotes a SQL identifier.
func ident(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

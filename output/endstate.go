package output

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
)

// EndDir is the scratch folder, in a run folder, where SaveEndState writes
// the slices of the run's end state; it is removed after and never archived.
const EndDir = "state-end"

// EndState is what SaveEndState stored.
type EndState struct {
	Slices  int   // slices of the end state
	Hashed  int   // of those, read to fingerprint them (the others kept the run's starting fingerprint)
	Written int   // of those, written and stored as objects (the others were in the cache)
	Bytes   int64 // bytes of the slices written
}

// SaveEndState stores the state db is in at the end of run runID, the state
// the next run starts from, as that run's SaveInputs would: every slice the
// state cache for store's archive lacks is written (same COPY), hashed and
// uploaded to its object (Has, then Put), then the state cache is replaced
// with the end state's slices. The next run's SaveInputs finds them as hits
// and writes nothing, unless the warehouse changed in between. Call it after
// SaveStateCache: the cache's entries are trusted as just stored. The
// slices are written under runDir/EndDir, which is removed. The slices of
// the grown tables are read only where the run may have changed them
// (endScope).
func SaveEndState(ctx context.Context, db *sql.DB, store Store, runDir, runID string) (EndState, error) {
	var es EndState
	if ok, err := hasTable(ctx, db, "state_cache"); err != nil || !ok {
		return es, err
	}
	dir := filepath.Join(runDir, EndDir)
	defer os.RemoveAll(dir)
	scope, err := loadEndScope(ctx, db, runDir, runID)
	if err != nil {
		return es, fmt.Errorf("end state: %w", err)
	}
	_, refs, err := writeState(ctx, db, store, dir, true, false, scope)
	if err != nil {
		return es, fmt.Errorf("end state: %w", err)
	}
	var rels []string
	var missed []int
	for i, r := range refs {
		if r.hashed {
			es.Hashed++
		}
		if r.SHA256 == "" && r.Fingerprint != "" { // a slice without one cannot be a hit: the next run writes it
			rels = append(rels, r.Path)
			missed = append(missed, i)
		}
	}
	files, err := describeFiles(ctx, dir, rels, nil, nil)
	if err != nil {
		return es, fmt.Errorf("end state: %w", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(uploads)
	putObjects(gctx, g, store, dir, files)
	if err := g.Wait(); err != nil {
		return es, fmt.Errorf("end state: %w", err)
	}
	if err := syncStore(ctx, store); err != nil {
		return es, fmt.Errorf("end state: %w", err)
	}
	for j, f := range files {
		r := &refs[missed[j]]
		r.SHA256, r.Size = f.SHA256, f.Size
		if f.Rows != nil {
			r.Rows = *f.Rows
		}
		es.Bytes += f.Size
	}
	es.Slices, es.Written = len(refs), len(files)
	if err := replaceStateCache(ctx, db, store.URL(), refs); err != nil {
		return es, fmt.Errorf("end state: %w", err)
	}
	return es, nil
}

// grown are the large tables a run changes only by deleting rows and by
// appending rows to slices of its own: its run_id (a loaded source), or a
// report it loaded (a report_id whose report_files row has its run_id).
// Another slice of theirs can then only lose rows, so the end pass keeps
// its fingerprint from the start of the run when its row count is the
// same, and reads only the run's own slices and those whose count changed:
// O(window), not O(history). A table whose writers do anything else (an
// UPDATE, an insert into a slice not the run's own) must not be listed
// here. pipeline.TestScopedEndState checks, over nightly runs, that every
// slice the end pass keeps is what a full read fingerprints.
var grown = map[string]bool{
	"payments": true, "payment_execution_results": true, "payment_quote_elements": true, "payment_fees": true,
	"statement_entries": true, "liquidations": true, "liquidation_trades": true, "trade_executions": true,
	"recon_transactions": true, "payment_ops": true, "failure_conversions": true, "source_files": true,
}

// endScope is what the end pass knows of its run: the slices of each table
// the run started from (SaveInputs's StateRefsName), and its own slices by
// slice column: its run id, the reports it loaded.
type endScope struct {
	start map[string][]stateRef
	own   map[string][]string
}

// loadEndScope reads the end scope of run runID from runDir and db; nil
// (every slice read) when SaveInputs wrote no slices there.
func loadEndScope(ctx context.Context, db *sql.DB, runDir, runID string) (*endScope, error) {
	refs, err := readStateRefs(runDir)
	if err != nil || refs == nil || runID == "" {
		return nil, err
	}
	s := &endScope{start: map[string][]stateRef{}, own: map[string][]string{"run_id": {runID}}}
	for _, r := range refs {
		s.start[r.Table] = append(s.start[r.Table], r)
	}
	if ok, err := hasTable(ctx, db, "report_files"); err != nil || !ok {
		return s, err
	}
	rows, err := db.QueryContext(ctx, `SELECT DISTINCT report_id FROM report_files WHERE run_id = $1 AND report_id IS NOT NULL`, runID)
	if err != nil {
		return nil, fmt.Errorf("reports of the run: %w", err)
	}
	defer rows.Close()
	s.own["report_id"] = []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		s.own["report_id"] = append(s.own["report_id"], id)
	}
	return s, rows.Err()
}

// fingerprints are the slices of table t (sliced by column col, value its
// SQL) at the end of the run, as the package's fingerprints gives them; of
// a grown table, only the run's own slices, new slices and slices whose
// row count changed are read, the others keep the fingerprint the run
// started with. A nil scope reads all.
func (s *endScope) fingerprints(ctx context.Context, db *sql.DB, version, t, col, value string, cols []column) ([]stateRef, error) {
	own, ok := []string(nil), false
	if s != nil && grown[t] {
		own, ok = s.own[col]
	}
	base, _, hashable := fingerprintBase(version, cols)
	start := map[string]string{}
	if ok && hashable {
		for _, r := range s.start[t] {
			if r.Slice == nil || !strings.HasPrefix(r.Fingerprint, base+"|") {
				ok = false
				break
			}
			start[*r.Slice] = r.Fingerprint
		}
	}
	if !ok || !hashable {
		return fingerprints(ctx, db, version, t, value, cols, nil)
	}
	rows, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT %[1]s AS v, count(*) FROM main.%[2]s GROUP BY v ORDER BY v NULLS FIRST`, value, ident(t)))
	if err != nil {
		return nil, fmt.Errorf("count the slices: %w", err)
	}
	defer rows.Close()
	var out []stateRef
	read, unsliced := []string{}, false
	for rows.Next() {
		var v sql.NullString
		var n int64
		if err := rows.Scan(&v, &n); err != nil {
			return nil, err
		}
		if !v.Valid { // rows without a slice value: not a grown table's
			unsliced = true
			break
		}
		fp, was := start[v.String]
		if was && !slices.Contains(own, v.String) && strings.HasPrefix(fp, fingerprintRows(base, n)) {
			out = append(out, stateRef{Table: t, Slice: &v.String, Fingerprint: fp})
			continue
		}
		read = append(read, v.String)
		out = append(out, stateRef{Table: t, Slice: &v.String})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if unsliced || len(out) == 0 {
		return fingerprints(ctx, db, version, t, value, cols, nil)
	}
	if len(read) == 0 {
		return out, nil
	}
	fresh, err := fingerprints(ctx, db, version, t, value, cols, read)
	if err != nil {
		return nil, err
	}
	byValue := make(map[string]stateRef, len(fresh))
	for _, r := range fresh {
		byValue[*r.Slice] = r
	}
	for i, r := range out {
		if r.Fingerprint != "" {
			continue
		}
		f, found := byValue[*r.Slice]
		if !found {
			return nil, fmt.Errorf("slice %s of %s: counted, then not found", *r.Slice, t)
		}
		out[i] = f
	}
	return out, nil
}

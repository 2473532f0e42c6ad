package output

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sync/errgroup"
)

// EndDir is the scratch folder, in a run folder, where SaveEndState writes
// the slices of the run's end state; it is removed after and never archived.
const EndDir = "state-end"

// EndState is what SaveEndState stored.
type EndState struct {
	Slices  int   // slices of the end state
	Written int   // of those, written and stored as objects (the others were in the cache)
	Bytes   int64 // bytes of the slices written
}

// SaveEndState stores the state db is in at the end of a run, the state the
// next run starts from, as that run's SaveInputs would: every slice the
// state cache for store's archive lacks is written (same COPY), hashed and
// uploaded to its object (Has, then Put), then the state cache is replaced
// with the end state's slices. The next run's SaveInputs finds them as hits
// and writes nothing, unless the warehouse changed in between. Call it after
// SaveStateCache: the cache's entries are trusted as just stored. The
// slices are written under runDir/EndDir, which is removed.
func SaveEndState(ctx context.Context, db *sql.DB, store Store, runDir string) (EndState, error) {
	var es EndState
	if ok, err := hasTable(ctx, db, "state_cache"); err != nil || !ok {
		return es, err
	}
	dir := filepath.Join(runDir, EndDir)
	defer os.RemoveAll(dir)
	_, refs, err := writeState(ctx, db, store, dir, true, false)
	if err != nil {
		return es, fmt.Errorf("end state: %w", err)
	}
	var rels []string
	var missed []int
	for i, r := range refs {
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

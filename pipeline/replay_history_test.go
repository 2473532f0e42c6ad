package pipeline_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"recon/output"
	"recon/pipeline"
	reconsql "recon/sql"
)

// TestReplayHistory: three consecutive nightly runs over overlapping
// windows. Their state is stored as shared slices (objects/), each
// referenced from the manifests, and the last run stores only the slices
// the history before it did not hold; every run replays byte for byte.
// The last run, rewritten in the layout of runs archived before slices (one
// Parquet per table under inputs/state), replays too.
func TestReplayHistory(t *testing.T) {
	e := newEnv(t, 7)
	var runs []*pipeline.Result
	clock := now
	for i := range 3 {
		clock = clock.Add(24 * time.Hour)
		c := clock
		e.cfg.Now = func() time.Time { c = c.Add(time.Second); return c }
		runs = append(runs, e.run(t, mustWindow(t, i, i+3)))
	}
	objects := objectSet(t, e.cfg.ArchiveURL)
	var refs int
	seen := map[string]bool{}
	for _, r := range runs {
		m := manifestOf(t, e.cfg.ArchiveURL, r.RunID)
		if m.Layout != output.ArchiveLayout || len(m.State) == 0 {
			t.Fatalf("%s: layout %d with %d state slices", r.RunID, m.Layout, len(m.State))
		}
		for _, f := range m.Files {
			if strings.HasPrefix(f.Path, output.StateDir+"/") {
				t.Errorf("%s: state file %s in the run folder", r.RunID, f.Path)
			}
		}
		for _, s := range m.State {
			if !objects[s.SHA256+".parquet"] {
				t.Errorf("%s: slice %s (%s) is not in objects/", r.RunID, s.Path, s.SHA256)
			}
			if !seen[s.SHA256] {
				seen[s.SHA256] = true
			}
			refs++
		}
	}
	if len(seen) >= refs {
		t.Errorf("%d distinct slices, %d references: the runs share none", len(seen), refs)
	}
	// issue 17: the state cache holds the slices of the state the last run
	// left (its end pass stored them), which the next run references
	// instead of writing them; the runs above after the first did, and
	// replay below checks them. Every object is a slice of a manifest or of
	// that end state.
	if db, err := reconsql.OpenDB(e.cfg.DB, true); err != nil {
		t.Fatal(err)
	} else {
		cached := column(t, db, `SELECT sha256 FROM state_cache`)
		db.Close()
		for _, sum := range cached {
			if !objects[sum+".parquet"] {
				t.Errorf("state cache entry %s is not in objects/", sum)
			}
			seen[sum] = true
		}
		if len(objects) != len(seen) {
			t.Errorf("%d objects, %d slices of manifests or the state cache", len(objects), len(seen))
		}
	}
	for _, r := range runs {
		res, err := replay(t, e.cfg.ArchiveURL, r.RunID)
		if err != nil {
			t.Fatalf("replay %s: %v", r.RunID, err)
		}
		if !res.Identical() {
			t.Errorf("replay of %s differs: %+v", r.RunID, res.Files)
		}
	}

	last := runs[len(runs)-1].RunID
	toOldLayout(t, e.cfg.ArchiveURL, last, nil)
	res, err := replay(t, e.cfg.ArchiveURL, last)
	if err != nil {
		t.Fatalf("replay of the old layout: %v", err)
	}
	if !res.Identical() {
		t.Errorf("replay of %s in the old layout differs: %+v", last, res.Files)
	}
}

func manifestOf(t *testing.T, archive, runID string) output.Manifest {
	t.Helper()
	var m output.Manifest
	if err := json.Unmarshal(archivedFile(t, archive, runID, output.ManifestName), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// toOldLayout rewrites an archived run as runs were archived before state
// slices: each table's state one Parquet file inputs/state/<table>.parquet
// in the run folder, listed among the manifest's files, no layout, no state.
// drop names, by table, columns its state leaves out (as a state saved
// before the migration that added them).
func toOldLayout(t *testing.T, archive, runID string, drop map[string]string) {
	t.Helper()
	m := manifestOf(t, archive, runID)
	runDir, _ := filepath.Glob(filepath.Join(archive, "run_date=*", "run_id="+runID))
	if len(runDir) != 1 {
		t.Fatalf("run folder: %v", runDir)
	}
	db, err := reconsql.OpenDB("", false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	byTable := map[string][]string{}
	var tables []string
	for _, s := range m.State {
		tbl := strings.Split(s.Path, "/")[2]
		if byTable[tbl] == nil {
			tables = append(tables, tbl)
		}
		obj := filepath.Join(archive, filepath.FromSlash(output.ObjectKey(s.SHA256)))
		byTable[tbl] = append(byTable[tbl], "'"+obj+"'")
	}
	if err := os.MkdirAll(filepath.Join(runDir[0], "inputs", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range tables {
		rel := output.StateDir + "/" + tbl + ".parquet"
		p := filepath.Join(runDir[0], filepath.FromSlash(rel))
		cols := "*"
		if d, ok := drop[tbl]; ok {
			cols = "* EXCLUDE (" + d + ")"
		}
		if _, err := db.Exec(fmt.Sprintf(`COPY (SELECT %s FROM read_parquet([%s])) TO '%s' (FORMAT parquet, COMPRESSION zstd)`,
			cols, strings.Join(byTable[tbl], ", "), p)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, output.File{Path: rel, Size: int64(len(b)), SHA256: output.SHA256(b)})
	}
	m.Layout, m.State = 0, nil
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir[0], output.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

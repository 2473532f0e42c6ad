package pipeline_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"recon/output"
	"recon/output/s3test"
	"recon/pipeline"
	reconsql "recon/sql"
)

// objectSet is the sha256 sums of the objects in the local archive.
func objectSet(t *testing.T, archive string) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	filepath.WalkDir(filepath.Join(archive, "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			keys[filepath.Base(p)] = true
		}
		return nil
	})
	return keys
}

// stateWritten is the slices the state stage of run id wrote (its rows in
// the run ledger): the others were state cache hits.
func stateWritten(t *testing.T, dbPath, id string) string {
	t.Helper()
	db, err := reconsql.OpenDB(dbPath, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got := column(t, db, `SELECT CAST(rows AS VARCHAR) FROM run_stages WHERE run_id = ? AND stage = 'state'`, id)
	if len(got) != 1 {
		t.Fatalf("run %s: state stage rows %v", id, got)
	}
	return got[0]
}

// nightly runs e night after night: night i, a day after the one before,
// reconciles days i to i+2.
func nightly(t *testing.T, e *env) func(i int) *pipeline.Result {
	clock := now
	return func(i int) *pipeline.Result {
		clock = clock.Add(24 * time.Hour)
		c := clock
		e.cfg.Now = func() time.Time { c = c.Add(time.Second); return c }
		return e.run(t, mustWindow(t, i, i+2))
	}
}

// TestEndStateMakesNextStateAllHits (issue 17): the end pass of a nightly
// run stores the slices of the state it leaves, so the next run's state
// stage writes none: every slice of its manifest is an object that was in
// the archive before it started, and it replays byte for byte.
func TestEndStateMakesNextStateAllHits(t *testing.T) {
	e := newEnv(t, 6)
	clock := now
	var ids []string
	var before map[string]bool
	for i := range 3 {
		clock = clock.Add(24 * time.Hour)
		c := clock
		e.cfg.Now = func() time.Time { c = c.Add(time.Second); return c }
		before = objectSet(t, e.cfg.ArchiveURL)
		ids = append(ids, e.run(t, mustWindow(t, i, i+2)).RunID)
	}
	if n := stateWritten(t, e.cfg.DB, ids[0]); n == "0" {
		t.Errorf("run 1 (no cache) wrote %s slices", n)
	}
	for _, id := range ids[1:] {
		if n := stateWritten(t, e.cfg.DB, id); n != "0" {
			t.Errorf("run %s: its state stage wrote %s slices, want 0 (all stored by the run before)", id, n)
		}
	}
	last := manifestOf(t, e.cfg.ArchiveURL, ids[2])
	for _, s := range last.State {
		if !before[s.SHA256+".parquet"] {
			t.Errorf("run %s: slice %s (%s) was not in the archive before it", ids[2], s.Path, s.SHA256)
		}
	}
	if res, err := replay(t, e.cfg.ArchiveURL, ids[2]); err != nil || !res.Identical() {
		t.Errorf("replay %s: %+v, %v", ids[2], res, err)
	}
}

// TestEndStateStoreFails: an end pass whose uploads the archive refuses
// changes nothing of the run: it publishes and archives complete, and the
// state cache it publishes is its manifest's slices (the start state), not
// the slices the end pass could not store. The next run writes its misses,
// as runs did before the end pass, and replays byte for byte.
func TestEndStateStoreFails(t *testing.T) {
	srv := s3test.Fake(t)
	e, st := s3Env(t, srv, 6)
	night := nightly(t, e)
	night(0)
	srv.RefusePuts("recon/nightly/" + output.ObjectsDir)
	res := night(1)
	srv.RefusePuts("")
	if res.Verdict != output.Complete || res.Archive == "" {
		t.Fatalf("run with a failed end pass: verdict %s %v, archive %q", res.Verdict, res.Reasons, res.Archive)
	}
	if n := stateWritten(t, e.cfg.DB, res.RunID); n != "0" {
		t.Errorf("run %s: its state stage wrote %s slices, want 0 (stored by the run before)", res.RunID, n)
	}
	_, m, err := output.FindRun(t.Context(), st, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range m.State {
		want = append(want, f.SHA256)
	}
	db, err := reconsql.OpenDB(e.cfg.DB, true)
	if err != nil {
		t.Fatal(err)
	}
	cached := column(t, db, `SELECT sha256 FROM state_cache`)
	db.Close()
	slices.Sort(want)
	slices.Sort(cached)
	if !slices.Equal(cached, want) {
		t.Errorf("state cache after a failed end pass: %d entries, want the manifest's %d slices", len(cached), len(want))
	}
	next := night(2)
	if n := stateWritten(t, e.cfg.DB, next.RunID); n == "0" {
		t.Errorf("run %s after a failed end pass wrote no slice: its start state was not stored", next.RunID)
	}
	r, err := pipeline.Replay(t.Context(), st, next.RunID, t.TempDir(), nil)
	if err != nil || !r.Identical() {
		t.Errorf("replay %s: %+v, %v", next.RunID, r, err)
	}
}

// TestSealBrokenByAWrite: a row changed in the published file between two
// nights breaks its seal, so the next run reads its tables instead of
// taking the end state from the state cache: the changed slice is written,
// and the run replays byte for byte.
func TestSealBrokenByAWrite(t *testing.T) {
	e := newEnv(t, 6)
	night := nightly(t, e)
	night(0)
	if _, err := os.Stat(e.cfg.DB + ".state-seal"); err != nil {
		t.Fatalf("the first night's end state stored, no seal: %v", err)
	}
	db, err := reconsql.OpenDB(e.cfg.DB, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE payments SET contract_hash = 'edited' WHERE payment_id = (SELECT min(payment_id) FROM payments); CHECKPOINT`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	res := night(1)
	if n := stateWritten(t, e.cfg.DB, res.RunID); n == "0" {
		t.Errorf("run %s after a write to the sealed file wrote no slice: it trusted the seal", res.RunID)
	}
	if r, err := replay(t, e.cfg.ArchiveURL, res.RunID); err != nil || !r.Identical() {
		t.Errorf("replay %s: %+v, %v", res.RunID, r, err)
	}
}

// TestScopedEndState (issue 17): of the grown tables, the end pass reads
// only the slices its run may have changed (its own, and those whose row
// count changed) and keeps the others' starting fingerprints. Those must be
// what a full read gives: with the seal removed before each night, the
// state stage fingerprints every table by reading it, so a slice kept with
// a stale fingerprint would be a miss, written. The nights overlap, one runs
// the window before it again (its reports loaded again), and from the
// third night on the end pass must keep some slices unread.
func TestScopedEndState(t *testing.T) {
	e := newEnv(t, 7)
	var logs bytes.Buffer
	e.cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	clock := now
	for i, w := range [][2]int{{0, 2}, {1, 3}, {1, 3}, {2, 4}, {3, 5}} {
		clock = clock.Add(24 * time.Hour)
		c := clock
		e.cfg.Now = func() time.Time { c = c.Add(time.Second); return c }
		if err := os.Remove(e.cfg.DB + ".state-seal"); i > 0 && err != nil {
			t.Fatalf("night %d: no seal to remove: %v", i+1, err)
		}
		logs.Reset()
		res := e.run(t, mustWindow(t, w[0], w[1]))
		if n := stateWritten(t, e.cfg.DB, res.RunID); i > 0 && n != "0" {
			t.Errorf("night %d (%s): the state stage, reading every table, wrote %s slices: the end pass before kept a stale fingerprint", i+1, res.RunID, n)
		}
		var es struct{ Slices, Hashed int }
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `"msg":"end state stored"`) {
				if err := json.Unmarshal([]byte(l), &es); err != nil {
					t.Fatal(err)
				}
			}
		}
		if es.Slices == 0 {
			t.Fatalf("night %d: no end state stored:\n%s", i+1, logs.String())
		}
		if i > 1 && es.Hashed >= es.Slices { // night 2's re-load shrinks every slice of night 1
			t.Errorf("night %d: the end pass read %d of %d slices, want some kept unread", i+1, es.Hashed, es.Slices)
		}
		if i == 4 {
			if r, err := replay(t, e.cfg.ArchiveURL, res.RunID); err != nil || !r.Identical() {
				t.Errorf("replay %s: %+v, %v", res.RunID, r, err)
			}
		}
	}
}

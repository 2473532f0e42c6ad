package pipeline_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"recon/extract/raw"
	"recon/output"
	"recon/pipeline"
	reconsql "recon/sql"
)

// archivedFile reads a file of an archived run in a local archive.
func archivedFile(t *testing.T, archive, runID, name string) []byte {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(archive, "run_date=*", "run_id="+runID, filepath.FromSlash(name)))
	if len(m) != 1 {
		t.Fatalf("%s of %s: found %v", name, runID, m)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func replay(t *testing.T, archive, runID string) (*pipeline.Replayed, error) {
	t.Helper()
	st, err := output.NewDirStore(archive)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.Replay(t.Context(), st, runID, t.TempDir(), nil)
}

// TestReplayIsByteIdentical replays two runs: a first one on an empty
// warehouse, and a later one over overlapping days that starts from the
// first one's state (persisting breaks with their first run and age, and a
// break it resolves). Both give the archived break files byte for byte.
func TestReplayIsByteIdentical(t *testing.T) {
	e := newEnv(t, 7)
	first := e.run(t, mustWindow(t, 0, 4))

	// A break that the next run will not find again, so it resolves it.
	db, err := reconsql.OpenDB(e.cfg.DB, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO breaks SELECT * REPLACE ('ffffffffffffffff' AS break_id, 'gone' AS break_key,
		DATE '2026-10-04' AS event_date) FROM breaks LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	later := now.Add(50 * time.Hour)
	e.cfg.Now = func() time.Time { later = later.Add(time.Second); return later }
	second := e.run(t, mustWindow(t, 2, 6))

	breaks := string(archivedFile(t, e.cfg.ArchiveURL, second.RunID, output.BreaksCSV))
	changes := string(archivedFile(t, e.cfg.ArchiveURL, second.RunID, output.ChangesCSV))
	for _, want := range []string{",persisting,", ",resolved,", first.RunID + ",2,open,,\r\n"} {
		if !strings.Contains(breaks, want) {
			t.Errorf("second run's breaks.csv lacks %q:\n%s", want, breaks)
		}
	}
	for _, want := range []string{"\r\nresolved,ffffffffffffffff,", "\r\npersisting,", "\r\nnew,"} {
		if !strings.Contains(changes, want) {
			t.Errorf("second run's changes.csv lacks %q:\n%s", want, changes)
		}
	}

	for _, res := range []*pipeline.Result{first, second} {
		r, err := replay(t, e.cfg.ArchiveURL, res.RunID)
		if err != nil {
			t.Fatalf("replay %s: %v", res.RunID, err)
		}
		if !r.Identical() {
			t.Errorf("replay of %s differs: %+v", res.RunID, r.Files)
		}
	}
}

func mustWindow(t *testing.T, from, to int) raw.Window {
	t.Helper()
	w, err := raw.NewWindow(day0.AddDate(0, 0, from), day0.AddDate(0, 0, to))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestReplayFailsOnTamperedInput: an archived input changed after the run
// fails the replay; so does one whose manifest entry was forged to match,
// because the recomputed breaks differ.
func TestReplayFailsOnTamperedInput(t *testing.T) {
	e := newEnv(t, 3)
	res := e.run(t, mustWindow(t, 0, 2))
	runDir, _ := filepath.Glob(filepath.Join(e.cfg.ArchiveURL, "run_date=*", "run_id="+res.RunID))
	if len(runDir) != 1 {
		t.Fatalf("run folder: %v", runDir)
	}
	ops, _ := filepath.Glob(filepath.Join(runDir[0], "inputs", "reports", "PAYMENT_OPS", "*.csv"))
	if len(ops) == 0 {
		t.Fatal("no archived PAYMENT_OPS file")
	}
	b, err := os.ReadFile(ops[0])
	if err != nil {
		t.Fatal(err)
	}
	// Drop the last payment, as if it never happened.
	lines := bytes.SplitAfter(bytes.TrimRight(b, "\n"), []byte("\n"))
	tampered := bytes.Join(lines[:len(lines)-1], nil)
	if err := os.WriteFile(ops[0], tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := replay(t, e.cfg.ArchiveURL, res.RunID); !errors.Is(err, output.ErrMismatch) {
		t.Fatalf("replay of a tampered input: %v, want ErrMismatch", err)
	}

	// Forge the manifest entry too: the inputs pass, the breaks do not.
	mpath := filepath.Join(runDir[0], output.ManifestName)
	var m output.Manifest
	mb, _ := os.ReadFile(mpath)
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(runDir[0], ops[0])
	for i, f := range m.Files {
		if f.Path == filepath.ToSlash(rel) {
			m.Files[i].Size, m.Files[i].SHA256 = int64(len(tampered)), output.SHA256(tampered)
		}
	}
	mb, _ = json.Marshal(m)
	if err := os.WriteFile(mpath, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := replay(t, e.cfg.ArchiveURL, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Identical() {
		t.Fatal("replay with a forged input reproduced the archived breaks")
	}
	for _, f := range r.Files {
		if f.Path == output.BreaksCSV && f.Same() {
			t.Errorf("breaks.csv unchanged by a dropped payment: %+v", f)
		}
	}
}

package pipeline_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"recon/extract/raw"
	"recon/pipeline"
)

// TestFailedRunFoldersArePruned: runs that fail leave their folder (raw
// files, starting state) in the work folder; only the newest KeepFailed stay.
// The folder of a published run whose archive is unfinished is kept whatever
// its age: recon archive --run needs it.
func TestFailedRunFoldersArePruned(t *testing.T) {
	e := newEnv(t, 1)
	e.cfg.KeepFailed = 2
	ctx := context.Background()
	// A published run whose upload failed, older than every failed run.
	const pending = "r-20261001T000000Z"
	wh, err := pipeline.OpenWarehouse(ctx, e.cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wh.DB.Exec(`INSERT INTO runs (run_id, window_from, window_to, as_of, started_at, finished_at, verdict, reasons)
		VALUES (?, DATE '2026-10-01', DATE '2026-10-01', now(), now(), now(), 'incomplete', ['archive: upload run x: refused'])`, pending); err != nil {
		t.Fatal(err)
	}
	if err := wh.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(e.cfg.WorkDir, pending, "inputs"), 0o755); err != nil {
		t.Fatal(err)
	}

	// The token service refuses the client: every run fails in extract.
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error": "invalid_client", "error_description": "unknown client"}`))
	}))
	defer auth.Close()
	e.cfg.Extract.AuthURL = auth.URL
	var ids []string
	for range 4 {
		res, err := pipeline.Run(ctx, e.cfg, raw.Window{From: day0, To: day0})
		if err == nil {
			t.Fatal("run with a refused client succeeded")
		}
		ids = append(ids, res.RunID)
	}
	entries, err := os.ReadDir(e.cfg.WorkDir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range entries {
		got = append(got, d.Name())
	}
	if want := []string{pending, ids[2], ids[3]}; !slices.Equal(got, want) {
		t.Errorf("work folder holds %v, want the pending run and the 2 newest failed runs %v", got, want)
	}
}

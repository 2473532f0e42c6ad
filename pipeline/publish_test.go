package pipeline_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"recon/extract/raw"
	"recon/output"
	"recon/pipeline"
)

// uploaded is the log message of a run whose archive files are uploaded,
// its manifest not yet written.
const uploaded = "archive uploaded; its manifest follows the publish"

// runIDOf returns the run_id attribute of a log record.
func runIDOf(r slog.Record) string {
	var id string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "run_id" {
			id = a.Value.String()
		}
		return true
	})
	return id
}

// TestPublishFailsAfterUpload: once the run's files are uploaded, something
// writes to the published file (a .wal appears), so the publish is refused.
// The archive then holds no run: no manifest, nothing replay or diff finds.
func TestPublishFailsAfterUpload(t *testing.T) {
	e := newEnv(t, 2)
	e.run(t, raw.Window{From: day0, To: day0})
	before := stateOf(t, e.cfg.DB)
	e.cfg.Logger = slog.New(newHook(uploaded, func(slog.Record) {
		if err := os.WriteFile(e.cfg.DB+".wal", []byte("an analyst's writes"), 0o644); err != nil {
			t.Error(err)
		}
	}))
	res, err := pipeline.Run(context.Background(), e.cfg, raw.Window{From: day0, To: day0.AddDate(0, 0, 1)})
	if err == nil || !strings.Contains(err.Error(), ".wal exists") {
		t.Fatalf("run whose publish is refused: %v", err)
	}
	st, err := output.NewDirStore(e.cfg.ArchiveURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := output.FindRun(t.Context(), st, res.RunID); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("archived run %s, never published: %v, want no manifest", res.RunID, err)
	}
	if _, err := replay(t, e.cfg.ArchiveURL, res.RunID); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("replay of the unpublished run: %v, want no such run", err)
	}
	if err := os.Remove(e.cfg.DB + ".wal"); err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, e.cfg.DB); got != before {
		t.Errorf("database after the refused publish: %q, want %q", got, before)
	}
}

// TestManifestFailsAfterPublish: the run publishes, then its manifest cannot
// be written (its path is a folder). The run ends incomplete with the archive
// reason in the ledger and its folder kept; recon archive --run completes it.
func TestManifestFailsAfterPublish(t *testing.T) {
	e := newEnv(t, 2)
	var manifest string
	e.cfg.Logger = slog.New(newHook(uploaded, func(r slog.Record) {
		id := runIDOf(r)
		started, err := time.Parse("r-20060102T150405Z", id)
		if err != nil {
			t.Error(err)
		}
		manifest = filepath.Join(e.cfg.ArchiveURL, filepath.FromSlash(output.RunPrefix(id, started)), output.ManifestName)
		if err := os.MkdirAll(manifest, 0o755); err != nil {
			t.Error(err)
		}
	}))
	res := e.run(t, raw.Window{From: day0, To: day0.AddDate(0, 0, 1)})
	if res.Verdict != output.Incomplete || len(res.Reasons) != 1 || !strings.Contains(res.Reasons[0], "recon archive --run "+res.RunID) {
		t.Fatalf("verdict %s %q, want incomplete with the archive command", res.Verdict, res.Reasons)
	}
	verdict, reasons, url := ledger(t, e.cfg.DB, res.RunID)
	if verdict != output.Incomplete || !strings.HasPrefix(reasons, "['archive: ") || url != "" {
		t.Fatalf("ledger: %s %s %q", verdict, reasons, url)
	}
	if _, err := os.Stat(filepath.Join(e.cfg.WorkDir, res.RunID, output.SummaryJSON)); err != nil {
		t.Fatalf("run folder not kept: %v", err)
	}
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	e.cfg.Logger = nil
	if _, err := pipeline.ArchiveRun(t.Context(), e.cfg, res.RunID); err != nil {
		t.Fatal(err)
	}
	assertManifest(t, e.cfg.ArchiveURL, res.RunID) // row counts from source_files and, for liquidation pages, the pages
	if verdict, reasons, _ := ledger(t, e.cfg.DB, res.RunID); verdict != output.Complete || reasons != "[]" {
		t.Errorf("ledger after recon archive: %s %s", verdict, reasons)
	}
	if r, err := replay(t, e.cfg.ArchiveURL, res.RunID); err != nil || !r.Identical() {
		t.Errorf("replay after recon archive: %v %+v", err, r)
	}
}

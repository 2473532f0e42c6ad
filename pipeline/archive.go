package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"time"

	"recon/extract/raw"
	"recon/output"
	"recon/transform"
)

// archiveStage names the upload stage; its errors, and so the reason a
// failed upload gives a run, start with "archive: ", which ArchiveRun takes back.
const (
	archiveStage        = "archive"
	archiveReasonPrefix = archiveStage + ": "
)

func archiveReason(runID string, err error) string {
	return fmt.Sprintf("%v; the run folder is kept: complete it with recon archive --run %s", err, runID)
}

// Archived is what ArchiveRun did.
type Archived struct {
	URL      string // the run's folder in the archive
	Manifest output.Manifest
}

// ArchiveRun uploads a published run whose upload failed, from its folder
// in the work folder, then records it as archived in the run ledger (archive
// URL set, the archive reason dropped, complete when no other reason is
// left) and removes the folder. It is safe to repeat: a run already archived
// is only recorded. A run missing from the ledger was never published and is
// refused. It needs cfg's DB, ArchiveURL, S3 and WorkDir, and holds the
// writer lock of cfg.DB like Run.
func ArchiveRun(ctx context.Context, cfg Config, runID string) (*Archived, error) {
	if runID == "" || !filepath.IsLocal(runID) || filepath.Base(runID) != runID {
		return nil, fmt.Errorf("run id %q is not a run folder name", runID)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// It rewrites the published file, as a run does: one writer at a time.
	lock, err := TryLock(WriterLockPath(cfg.DB), cfg.Command, time.Now())
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	runDir := filepath.Join(cfg.WorkDir, runID)
	if err := inLedger(ctx, cfg.DB, runID); err != nil {
		return nil, fmt.Errorf("%w; it is not archived (its folder is %s)", err, runDir)
	}
	store, err := output.OpenStore(ctx, cfg.ArchiveURL, cfg.S3)
	if err != nil {
		return nil, err
	}
	s, err := output.ReadSummary(runDir)
	var a Archived
	switch {
	case errors.Is(err, fs.ErrNotExist):
		prefix, m, ferr := output.FindRun(ctx, store, runID)
		if ferr != nil {
			return nil, fmt.Errorf("run %s: no run folder under %s, and not archived: %w", runID, cfg.WorkDir, ferr)
		}
		a = Archived{URL: store.URL() + "/" + prefix, Manifest: m}
	case err != nil:
		return nil, err
	default:
		rows, err := loadedRows(ctx, cfg.DB, runID, runDir)
		if err != nil {
			return nil, err
		}
		if a.Manifest, err = output.Archive(ctx, store, s.Run, runDir, rows); err != nil {
			return nil, err
		}
		a.URL = store.URL() + "/" + output.RunPrefix(s.Run.ID, s.Run.StartedAt)
	}
	if err := markArchived(ctx, cfg.DB, runID, a.URL); err != nil {
		return &a, err
	}
	if err := os.RemoveAll(runDir); err != nil {
		log.Warn("could not remove the run folder", "dir", runDir, "err", err)
	}
	return &a, nil
}

// inputRows are the data rows of the run's raw files for its manifest, as
// the loader counted them.
func inputRows(loaded transform.Stats) output.Rows {
	rows := output.Rows{}
	for _, f := range loaded.Files {
		if f.File.Path == "" {
			continue
		}
		var n *int64
		if c, ok := f.Records(); ok {
			n = &c
		}
		rows[path.Join(output.InputsDir, f.File.Path)] = n
	}
	return rows
}

// loadedRows are inputRows of a published run, from its rows of source_files
// and, for a liquidation list page, whose items they do not count, the page
// in runDir.
func loadedRows(ctx context.Context, db, runID, runDir string) (output.Rows, error) {
	conn, err := OpenPublished(db)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	q, err := conn.QueryContext(ctx, `SELECT source, source_file, rows_loaded, rows_quarantined FROM source_files
		WHERE run_id = ? AND source_file <> ''`, runID)
	if err != nil {
		return nil, fmt.Errorf("read the files run %s loaded: %w", runID, err)
	}
	defer q.Close()
	var loaded transform.Stats
	for q.Next() {
		f := transform.FileStats{File: &raw.File{}}
		if err := q.Scan(&f.File.Source, &f.File.Path, &f.Rows, &f.Quarantined); err != nil {
			return nil, fmt.Errorf("read the files run %s loaded: %w", runID, err)
		}
		if f.File.Source == raw.SourceLiquidation {
			b, err := os.ReadFile(filepath.Join(runDir, output.InputsDir, filepath.FromSlash(f.File.Path)))
			if err != nil {
				return nil, fmt.Errorf("read the files run %s loaded: %w", runID, err)
			}
			if items, isPage, _ := transform.LiquidationPage(b); isPage {
				n := int64(len(items))
				f.Items = &n
			}
		}
		loaded.Files = append(loaded.Files, f)
	}
	if err := q.Err(); err != nil {
		return nil, fmt.Errorf("read the files run %s loaded: %w", runID, err)
	}
	return inputRows(loaded), nil
}

// inLedger checks that the published DuckDB file knows the run.
func inLedger(ctx context.Context, db, runID string) error {
	if _, err := os.Stat(db); err != nil {
		return fmt.Errorf("run %s: %w", runID, err)
	}
	_, err := readLedger(db, func(l Ledger) error {
		has, err := l.Has(ctx, runID)
		switch {
		case err != nil:
			return fmt.Errorf("read the run ledger of %s: %w", db, err)
		case !has:
			return fmt.Errorf("run %s is not in the run ledger of %s: it was never published", runID, db)
		}
		return nil
	})
	return err
}

// commitArchive writes the manifest of a run that has just published, its
// files uploaded. If that fails, the run, published as archived, is recorded
// again as incomplete with an archive reason, as a failed upload is, so
// ArchiveRun completes it from the run folder, which is kept.
func commitArchive(ctx context.Context, cfg Config, store output.Store, res *Result, m output.Manifest, log *slog.Logger) error {
	err := output.Commit(ctx, store, m)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("%s: %w", archiveStage, err)
	reason := archiveReason(res.RunID, err)
	res.Verdict, res.Reasons, res.Archive = output.Incomplete, append(res.Reasons, reason), ""
	log.Error("archive manifest not written after the publish; the run folder is kept", "err", err)
	if lerr := updateLedger(ctx, cfg.DB, func(l Ledger) error {
		if err := l.markUnarchived(ctx, res.RunID, reason); err != nil {
			return fmt.Errorf("record the archive of %s: %w", res.RunID, err)
		}
		return nil
	}); lerr != nil {
		log.Error("the run ledger still shows the run archived; recon archive --run corrects it",
			"run_id", res.RunID, "err", lerr)
	}
	return err
}

// markArchived records the run's archive in the run ledger.
func markArchived(ctx context.Context, db, id, url string) error {
	return updateLedger(ctx, db, func(l Ledger) error {
		if err := l.markArchived(ctx, id, url); err != nil {
			return fmt.Errorf("record the archive of %s: %w", id, err)
		}
		return nil
	})
}

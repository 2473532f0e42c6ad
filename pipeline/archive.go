package pipeline

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"recon/output"
	reconsql "recon/sql"
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
		a.Manifest, err = output.Archive(ctx, store, s.Run, runDir)
		if err != nil {
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

// inLedger checks that the published DuckDB file knows the run.
func inLedger(ctx context.Context, db, runID string) error {
	if _, err := os.Stat(db); err != nil {
		return fmt.Errorf("run %s: %w", runID, err)
	}
	conn, err := reconsql.OpenDB(db, true)
	if err != nil {
		return err
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE run_id = ?`, runID).Scan(&n); err != nil {
		return fmt.Errorf("read the run ledger of %s: %w", db, err)
	}
	if n == 0 {
		return fmt.Errorf("run %s is not in the run ledger of %s: it was never published", runID, db)
	}
	return nil
}

// markArchived records the run's archive in the run ledger, through a
// working copy of the DuckDB file like a run.
func markArchived(ctx context.Context, db, runID, url string) error {
	wh, err := OpenWarehouse(ctx, db)
	if err != nil {
		return err
	}
	if _, err := wh.DB.ExecContext(ctx, `UPDATE runs SET archive_url = $url,
			reasons = list_filter(reasons, lambda r: NOT starts_with(r, $prefix)),
			verdict = CASE WHEN len(list_filter(reasons, lambda r: NOT starts_with(r, $prefix))) = 0
				THEN 'complete' ELSE verdict END
		WHERE run_id = $run_id`,
		sql.Named("url", url), sql.Named("prefix", archiveReasonPrefix), sql.Named("run_id", runID)); err != nil {
		wh.Discard()
		return fmt.Errorf("record the archive of %s: %w", runID, err)
	}
	if err := wh.Publish(ctx); err != nil {
		wh.Discard()
		return err
	}
	return nil
}

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

	"recon/output"
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
	Ledger   bool // the run ledger was updated
}

// ArchiveRun uploads a run whose upload failed, from its folder in the work
// folder, then records it as archived in the run ledger (archive URL set,
// the archive reason dropped, complete when no other reason is left) and
// removes the folder. It is safe to repeat: a run already archived is only
// recorded. It needs cfg's DB, ArchiveURL, S3 and WorkDir.
func ArchiveRun(ctx context.Context, cfg Config, runID string) (*Archived, error) {
	if runID == "" || !filepath.IsLocal(runID) || filepath.Base(runID) != runID {
		return nil, fmt.Errorf("run id %q is not a run folder name", runID)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	store, err := output.OpenStore(ctx, cfg.ArchiveURL, cfg.S3)
	if err != nil {
		return nil, err
	}
	runDir := filepath.Join(cfg.WorkDir, runID)
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
	a.Ledger, err = markArchived(ctx, cfg.DB, runID, a.URL)
	if err != nil {
		return &a, err
	}
	if !a.Ledger {
		log.Warn("the run is not in the run ledger; only its archive was completed", "run_id", runID, "db", cfg.DB)
	}
	if err := os.RemoveAll(runDir); err != nil {
		log.Warn("could not remove the run folder", "dir", runDir, "err", err)
	}
	return &a, nil
}

// markArchived records the run's archive in the ledger of the DuckDB file,
// through a working copy like a run; false when the run is not there.
func markArchived(ctx context.Context, db, runID, url string) (bool, error) {
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	wh, err := OpenWarehouse(ctx, db)
	if err != nil {
		return false, err
	}
	res, err := wh.DB.ExecContext(ctx, `UPDATE runs SET archive_url = $url,
			reasons = list_filter(reasons, lambda r: NOT starts_with(r, $prefix)),
			verdict = CASE WHEN len(list_filter(reasons, lambda r: NOT starts_with(r, $prefix))) = 0
				THEN 'complete' ELSE verdict END
		WHERE run_id = $run_id`,
		sql.Named("url", url), sql.Named("prefix", archiveReasonPrefix), sql.Named("run_id", runID))
	if err != nil {
		wh.Discard()
		return false, fmt.Errorf("record the archive of %s: %w", runID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		wh.Discard()
		return false, nil
	}
	if err := wh.Publish(ctx); err != nil {
		wh.Discard()
		return false, err
	}
	return true, nil
}

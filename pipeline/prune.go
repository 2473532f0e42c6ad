package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"recon/output"
)

// pruneFailed removes the run folders under cfg.WorkDir left by failed runs
// (raw files and the warehouse state a run started from), keeping the newest
// cfg.KeepFailed. A folder of a run that was published but whose archive is
// unfinished (an "archive: " reason in the run ledger) is never removed, nor
// counted: recon archive --run needs it. Folders are named by run id, so
// sort by start time. It runs under the writer lock, after a run.
func pruneFailed(cfg Config) error {
	entries, err := os.ReadDir(cfg.WorkDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var folders []string
	for _, e := range entries {
		if _, err := time.Parse(output.RunIDLayout, e.Name()); err == nil && e.IsDir() {
			folders = append(folders, e.Name())
		}
	}
	if len(folders) <= cfg.KeepFailed {
		return nil
	}
	pending, err := archivePending(cfg.DB)
	if err != nil {
		return fmt.Errorf("read the runs whose archive is unfinished: %w", err)
	}
	failed := slices.DeleteFunc(folders, func(id string) bool { return slices.Contains(pending, id) })
	slices.Sort(failed)
	var errs []error
	for _, id := range failed[:max(0, len(failed)-cfg.KeepFailed)] {
		errs = append(errs, os.RemoveAll(filepath.Join(cfg.WorkDir, id)))
	}
	return errors.Join(errs...)
}

// archivePending lists the published runs whose archive is unfinished.
func archivePending(db string) (ids []string, err error) {
	_, err = readLedger(db, func(l Ledger) error {
		ids, err = l.ArchivePending(context.Background())
		return err
	})
	return ids, err
}

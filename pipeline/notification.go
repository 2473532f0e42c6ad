package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/webhook"
)

// The webhook notification source's part of a run (DESIGN §10): which ids
// the warehouse already has, and the spool offset committed once the run
// published (never before: a run that did not publish leaves the ids to
// the next one).

// notificationsSeen returns the msg_ids the published warehouse has fetched
// (counted, not fetched again) and those it could not fetch (fetched again).
// A warehouse not yet published, or without the table, has none.
func notificationsSeen(ctx context.Context, published string) (loaded map[string]bool, retry []string, err error) {
	if _, err := os.Stat(published); errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	snap, err := OpenPublished(published)
	if err != nil {
		return nil, nil, fmt.Errorf("notifications already loaded: %w", err)
	}
	defer snap.Close()
	var n int
	if err := snap.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE table_name = 'notifications'`).Scan(&n); err != nil || n == 0 {
		return nil, nil, err
	}
	rows, err := snap.QueryContext(ctx, `SELECT msg_id, fetch_status = 'FETCHED' FROM notifications ORDER BY msg_id`)
	if err != nil {
		return nil, nil, fmt.Errorf("notifications already loaded: %w", err)
	}
	defer rows.Close()
	loaded = map[string]bool{}
	for rows.Next() {
		var id string
		var ok bool
		if err := rows.Scan(&id, &ok); err != nil {
			return nil, nil, err
		}
		if ok {
			loaded[id] = true
		} else {
			retry = append(retry, id)
		}
	}
	return loaded, retry, rows.Err()
}

// spoolRead returns the offset after the spool range a run's raw files
// read (the receipts file's next), and whether there is one.
func spoolRead(rawDir string, files []raw.File) (int64, bool, error) {
	for _, f := range files {
		if f.Source != raw.SourceNotificationReceipt || f.Status != raw.StatusReady {
			continue
		}
		b, err := os.ReadFile(filepath.Join(rawDir, filepath.FromSlash(f.Path)))
		if err != nil {
			return 0, false, fmt.Errorf("notification receipts: %w", err)
		}
		doc, err := extract.ReadReceipts(b)
		if err != nil {
			return 0, false, fmt.Errorf("notification receipts %s: %w", f.Path, err)
		}
		return doc.Next, true, nil
	}
	return 0, false, nil
}

// commitSpool records, after the publish, that the run consumed the spool
// up to next. A failure is logged: the run is published, and the next run
// reads the same ids again (their deliveries are then counted twice).
func commitSpool(spool string, next int64, log *slog.Logger) {
	if err := webhook.Commit(spool, next); err != nil {
		log.Error("webhook spool offset not committed: the next run reads these ids again", "spool", spool, "next", next, "err", err)
		return
	}
	log.Info("webhook spool offset committed", "spool", spool, "next", next)
}

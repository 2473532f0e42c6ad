package transform

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"recon/extract"
	"recon/extract/raw"
)

// notificationJSON is GET /orchestration/payment/notification/{msg_id}.
type notificationJSON struct {
	UUID    string  `json:"uuid"`
	Type    *string `json:"notification_type"`
	Version *string `json:"notification_version"`
	Status  *string `json:"notification_status"`
	Payload *struct {
		SenderEndToEndID         *string         `json:"sender_end_to_end_id"`
		PaymentID                *string         `json:"payment_id"`
		PaymentStatus            *string         `json:"payment_status"`
		PreviousPaymentStatus    *string         `json:"previous_payment_status"`
		ConnectorRole            *string         `json:"connector_role"`
		PaymentType              *string         `json:"payment_type"`
		PayoutMethod             *string         `json:"payout_method"`
		OriginalSenderEndToEndID *string         `json:"original_sender_end_to_end_id"`
		Output                   json.RawMessage `json:"output"`
	} `json:"notification_payload"`
	CreatedAt  *string `json:"created_at"`
	ModifiedAt *string `json:"modified_at"`
}

// notificationCols are the columns a fetch sets (kept when a run only counts receipts).
var notificationCols = []string{"fetch_status", "fetch_error", "notification_type", "notification_version",
	"notification_status", "created_at", "modified_at", "sender_end_to_end_id", "payment_id", "payment_status",
	"previous_payment_status", "connector_role", "payment_type", "payout_method", "original_sender_end_to_end_id",
	"output", "source_file", "request"}

// notificationRow is one msg_id of a load: its receipts and, unless only
// counted (LOADED), its fetch.
type notificationRow struct {
	msgID       string
	count       int64
	first, last time.Time
	receipts    string // the receipts file
	fetch       []any  // notificationCols' values; nil when only counted
}

// loadNotifications loads the notification receipts and bodies of one run
// into notifications in one transaction: each msg_id's deliveries are added
// to its row, and a fetch (or its failure) replaces the fetched columns.
func (l *Loader) loadNotifications(ctx context.Context, conn *sql.Conn, files []raw.File) ([]FileStats, error) {
	stats := make([]FileStats, len(files))
	at := map[string]int{} // path -> index in files
	for i := range files {
		stats[i].File = &files[i]
		at[files[i].Path] = i
	}
	rows := map[string]*notificationRow{}
	var order []string
	for i, f := range files {
		if f.Source != raw.SourceNotificationReceipt {
			continue
		}
		b, err := readDoc(l.path(f))
		if err != nil {
			return nil, err
		}
		doc, err := extract.ReadReceipts(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		for _, r := range doc.Receipts {
			row := rows[r.MsgID]
			if row == nil {
				row = &notificationRow{msgID: r.MsgID}
				rows[r.MsgID] = row
				order = append(order, r.MsgID)
			}
			row.count += int64(r.Count)
			if !r.First.IsZero() && (row.first.IsZero() || r.First.Before(row.first)) {
				row.first = r.First
			}
			if r.Last.After(row.last) {
				row.last = r.Last
			}
			row.receipts = f.Path
			stats[i].Rows++
			if r.Fetch == extract.FetchLoaded {
				continue
			}
			if row.fetch, err = l.fetched(r, at, stats); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
		}
	}
	if err := stageNotifications(ctx, conn, rows, order); err != nil {
		return nil, err
	}
	if err := stageRecord(ctx, conn, nil, stats); err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := execAll(ctx, tx, []any{sql.Named("run_id", l.runID)}, append(mergeNotificationsSQL(), recordFilesSQL...)...); err != nil {
		return nil, fmt.Errorf("load notifications: %w", err)
	}
	return stats, tx.Commit()
}

// fetched returns the fetched columns of receipt r: the notification's
// fields when FETCHED and readable, else its failure. A body that is not a
// notification of that msg_id loads as FAILED, with the reason.
func (l *Loader) fetched(r extract.Receipt, at map[string]int, stats []FileStats) ([]any, error) {
	str := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	fail := func(status, reason string) []any {
		v := make([]any, len(notificationCols))
		v[0], v[1], v[17] = status, reason, nilIfEmpty(r.Request)
		return v
	}
	switch r.Fetch {
	case extract.FetchNotFound, extract.FetchFailed:
		return fail(r.Fetch, r.Error), nil
	case extract.FetchFetched:
	default:
		return nil, fmt.Errorf("msg_id %s: unknown fetch outcome %q", r.MsgID, r.Fetch)
	}
	i, ok := at[r.Path]
	if !ok {
		return nil, fmt.Errorf("msg_id %s: its notification %s is not in the index", r.MsgID, r.Path)
	}
	body, err := readDoc(l.path(*stats[i].File))
	if err != nil {
		return nil, err
	}
	var n notificationJSON
	if err := decodeJSON(body, &n); err != nil {
		return fail(extract.FetchFailed, "not a notification: "+jsonProblem(err)), nil
	}
	if !strings.EqualFold(strings.TrimSpace(n.UUID), r.MsgID) || n.Payload == nil {
		return fail(extract.FetchFailed, fmt.Sprintf("not the notification of %s: uuid %q, payload present %t", r.MsgID, n.UUID, n.Payload != nil)), nil
	}
	var times [2]any
	for k, s := range []*string{n.CreatedAt, n.ModifiedAt} {
		if s == nil || *s == "" {
			continue
		}
		us, err := parseTime(*s)
		if err != nil {
			return fail(extract.FetchFailed, fmt.Sprintf("not a notification: time %q: %v", *s, err)), nil
		}
		times[k] = microsTime(us)
	}
	var output any
	if o := strings.TrimSpace(string(n.Payload.Output)); o != "" && o != "null" {
		output = o
	}
	p := n.Payload
	stats[i].Rows = 1
	return []any{extract.FetchFetched, nil, str(n.Type), str(n.Version), str(n.Status), times[0], times[1],
		str(p.SenderEndToEndID), str(p.PaymentID), str(p.PaymentStatus), str(p.PreviousPaymentStatus), str(p.ConnectorRole),
		str(p.PaymentType), str(p.PayoutMethod), str(p.OriginalSenderEndToEndID), output, r.Path, nilIfEmpty(r.Request)}, nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// stageNotifications writes rows into the temporary table stage_notifications.
func stageNotifications(ctx context.Context, conn *sql.Conn, rows map[string]*notificationRow, order []string) error {
	create := `CREATE OR REPLACE TEMP TABLE stage_notifications (msg_id VARCHAR, received_count BIGINT,
		first_received_at TIMESTAMPTZ, last_received_at TIMESTAMPTZ, receipts_file VARCHAR, fetched BOOLEAN`
	for _, c := range notificationCols {
		typ := "VARCHAR"
		switch c {
		case "created_at", "modified_at":
			typ = "TIMESTAMPTZ"
		case "output":
			typ = "JSON"
		}
		create += ", " + c + " " + typ
	}
	if _, err := conn.ExecContext(ctx, create+")"); err != nil {
		return fmt.Errorf("stage notifications: %w", err)
	}
	if len(order) == 0 {
		return nil
	}
	ins, err := conn.PrepareContext(ctx, `INSERT INTO stage_notifications VALUES (?, ?, ?, ?, ?, ?`+
		strings.Repeat(", ?", len(notificationCols))+`)`)
	if err != nil {
		return fmt.Errorf("stage notifications: %w", err)
	}
	defer ins.Close()
	for _, id := range order {
		r := rows[id]
		args := []any{r.msgID, r.count, timeOrNil(r.first), timeOrNil(r.last), r.receipts, r.fetch != nil}
		if r.fetch == nil {
			args = append(args, make([]any, len(notificationCols))...)
		} else {
			args = append(args, r.fetch...)
		}
		if _, err := ins.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("stage notification %s: %w", id, err)
		}
	}
	return nil
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// mergeNotificationsSQL adds the staged receipts to notifications: counts
// summed, receipt times widened, and the fetched columns replaced by a
// fetch of this run (kept when the run only counted the id).
func mergeNotificationsSQL() []string {
	var sel []string
	for _, c := range notificationCols {
		sel = append(sel, fmt.Sprintf("CASE WHEN s.fetched OR n.msg_id IS NULL THEN s.%s ELSE n.%s END AS %s", c, c, c))
	}
	return []string{
		`CREATE OR REPLACE TEMP TABLE merged_notifications AS
		SELECT s.msg_id, coalesce(n.received_count, 0) + s.received_count AS received_count,
			CASE WHEN n.first_received_at IS NULL OR s.first_received_at < n.first_received_at THEN s.first_received_at ELSE n.first_received_at END AS first_received_at,
			CASE WHEN n.last_received_at IS NULL OR s.last_received_at > n.last_received_at THEN s.last_received_at ELSE n.last_received_at END AS last_received_at,
			` + strings.Join(sel, ",\n\t\t\t") + `,
			s.receipts_file
		FROM stage_notifications s LEFT JOIN notifications n USING (msg_id)`,
		// An id counted only, without a row (a database older than the run that fetched it): a failed fetch the next run retries.
		`UPDATE merged_notifications SET fetch_status = 'FAILED', fetch_error = 'fetched by an earlier run, whose row is missing' WHERE fetch_status IS NULL`,
		`DELETE FROM notifications WHERE msg_id IN (SELECT msg_id FROM stage_notifications)`,
		`INSERT INTO notifications (msg_id, received_count, first_received_at, last_received_at, ` + strings.Join(notificationCols, ", ") + `,
			receipts_file, run_id)
		SELECT msg_id, received_count, first_received_at, last_received_at, ` + strings.Join(notificationCols, ", ") + `,
			receipts_file, $run_id FROM merged_notifications ORDER BY msg_id`,
	}
}

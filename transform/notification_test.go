package transform_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract"
	"recon/extract/raw"
)

const (
	msgA = "0b7d3d8e-aaaa-4c8e-9a53-2f0e6f1d2c4b"
	msgB = "0b7d3d8e-bbbb-4c8e-9a53-2f0e6f1d2c4b"
	msgC = "0b7d3d8e-cccc-4c8e-9a53-2f0e6f1d2c4b"
	msgD = "0b7d3d8e-dddd-4c8e-9a53-2f0e6f1d2c4b"
)

// notificationRun writes the raw folder of one run's notifications: the
// receipts and the bodies given, as Extract would.
func notificationRun(t *testing.T, receipts []extract.Receipt, bodies map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	var files []raw.File
	write := func(f raw.File, b []byte) {
		name := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		f.Format, f.Status, f.Size = raw.FormatJSON, raw.StatusReady, int64(len(b))
		files = append(files, f)
	}
	for id, body := range bodies {
		write(raw.File{Source: raw.SourceNotification, Path: "notifications/" + id + ".json"}, []byte(body))
	}
	b, _ := json.Marshal(extract.Receipts{Spool: "s", Receipts: receipts})
	write(raw.File{Source: raw.SourceNotificationReceipt, Path: "notifications/receipts_0_1.json"}, b)
	idx, _ := json.Marshal(files)
	if err := os.WriteFile(filepath.Join(dir, "index.json"), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func body(id, status string) string {
	return `{"uuid":"` + id + `","notification_type":"PAYMENT_SUCCESS","notification_version":"1.0","notification_status":"NEW",
	"notification_payload":{"sender_end_to_end_id":"E1","payment_id":"p1","payment_status":"` + status + `",
	"previous_payment_status":"LOCKED","connector_role":"SENDING","payment_type":"REGULAR","payout_method":null,
	"original_sender_end_to_end_id":null,"output":null},"created_at":"2026-10-01T10:00:00.000Z","modified_at":"2026-10-01T10:00:00.000Z"}`
}

// TestLoadNotifications: one row per msg_id; a later run that only counts
// an id adds its deliveries and keeps its fetched fields; 404s, failures and
// a body that is not the id's notification load as unfetched.
func TestLoadNotifications(t *testing.T) {
	db := newDB(t)
	t0 := time.Date(2026, 10, 1, 10, 0, 0, 0, time.UTC)
	rec := func(id string, n int, fetch, path string) extract.Receipt {
		return extract.Receipt{MsgID: id, First: t0.Add(time.Duration(n) * time.Minute), Last: t0.Add(time.Hour), Count: n,
			Fetch: fetch, Path: path, Error: map[string]string{extract.FetchNotFound: "Not Found (HTTP 404)", extract.FetchFailed: "boom"}[fetch]}
	}
	load(t, db, notificationRun(t, []extract.Receipt{
		rec(msgA, 2, extract.FetchFetched, "notifications/"+msgA+".json"),
		rec(msgB, 1, extract.FetchNotFound, ""),
		rec(msgC, 1, extract.FetchFailed, ""),
		rec(msgD, 1, extract.FetchFetched, "notifications/"+msgD+".json"),
	}, map[string]string{msgA: body(msgA, "EXECUTED"), msgD: body(msgA, "EXECUTED")}))
	later := rec(msgA, 3, extract.FetchLoaded, "")
	later.First, later.Last = t0.Add(2*time.Hour), t0.Add(3*time.Hour)
	st := load(t, db, notificationRun(t, []extract.Receipt{later, {MsgID: msgB, Fetch: extract.FetchFetched, Path: "notifications/" + msgB + ".json"}},
		map[string]string{msgB: body(msgB, "COMPLETED")}))
	if n := st.Rows(raw.SourceNotificationReceipt); n != 2 {
		t.Errorf("receipts rows %d, want 2", n)
	}
	got := queryRows(t, db, `SELECT msg_id, received_count, strftime(first_received_at, '%H:%M'), strftime(last_received_at, '%H:%M'),
		fetch_status, coalesce(payment_status, '-'), coalesce(source_file, '-') FROM notifications ORDER BY msg_id`)
	want := [][]string{
		{msgA, "5", "10:02", "13:00", "FETCHED", "EXECUTED", "notifications/" + msgA + ".json"},
		{msgB, "1", "10:01", "11:00", "FETCHED", "COMPLETED", "notifications/" + msgB + ".json"},
		{msgC, "1", "10:01", "11:00", "FAILED", "-", "-"},
		{msgD, "1", "10:01", "11:00", "FAILED", "-", "-"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
	trace := queryRows(t, db, `SELECT payment_id, CAST(notifications AS VARCHAR), CAST(notification_deliveries AS VARCHAR), notification_status
		FROM payment_trace WHERE notifications > 0`)
	if diff := cmp.Diff([][]string{{"p1", "2", "6", "COMPLETED"}}, trace); diff != "" {
		t.Errorf("payment_trace (-want +got):\n%s", diff)
	}
}

func queryRows(t *testing.T, db *sql.DB, q string) [][]string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var row []string
		for _, v := range vals {
			row = append(row, v.String)
		}
		out = append(out, row)
	}
	return out
}

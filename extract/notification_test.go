package extract

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"recon/extract/raw"
	"recon/extract/webhook"
)

const (
	idOK      = "0b7d3d8e-1111-4c8e-9a53-2f0e6f1d2c4b"
	idGone    = "0b7d3d8e-2222-4c8e-9a53-2f0e6f1d2c4b"
	idBroken  = "0b7d3d8e-3333-4c8e-9a53-2f0e6f1d2c4b"
	idLoaded  = "0b7d3d8e-4444-4c8e-9a53-2f0e6f1d2c4b"
	idRetried = "0b7d3d8e-5555-4c8e-9a53-2f0e6f1d2c4b"
)

// spoolOf writes the deliveries ids (in order) to a new spool, as the receiver does.
func spoolOf(t *testing.T, ids ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "recon-webhook.spool")
	s, err := webhook.OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 10, 1, 10, 0, 0, 0, time.UTC)
	for i, id := range ids {
		rec := webhook.Record{MsgID: id, ReceivedAt: at.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano), Remote: "127.0.0.1"}
		if err := s.Append(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExtractNotifications: each new msg_id of the spool is fetched once; a
// 404 and an id that keeps failing are recorded, not fatal; an id loaded
// before is counted, not fetched; an id to retry is fetched without
// receipts; the receipts file names the offsets read.
func TestExtractNotifications(t *testing.T) {
	var mu sync.Mutex
	gets := map[string]int{}
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("GET /v4/orchestration/payment/notification/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		mu.Lock()
		gets[id]++
		mu.Unlock()
		switch id {
		case idGone:
			writeJSON(w, 404, map[string]string{"ripplenet_error_code": "NOT_FOUND"})
		case idBroken:
			writeJSON(w, 503, map[string]string{"title": "Server not available"})
		default:
			writeJSON(w, 200, map[string]any{"uuid": id, "notification_type": "PAYMENT_SUCCESS"})
		}
	})
	c := newTestClient(t, mux)
	recordWaits(c)
	spool := spoolOf(t, idOK, idGone, idOK, idBroken, idLoaded)
	w, _ := raw.ParseWindow("2026-10-01", "2026-10-02")
	dir := t.TempDir()
	out, err := c.extractNotifications(c.withRun(context.Background()), Notifications{
		Spool: spool, Loaded: map[string]bool{idLoaded: true}, Retry: []string{idRetried, idGone}}, w, dir)
	if err != nil {
		t.Fatal(err)
	}
	var receipts *raw.File
	fetched := map[string]bool{}
	for _, f := range out.files {
		switch f.Source {
		case raw.SourceNotificationReceipt:
			receipts = &f
		case raw.SourceNotification:
			fetched[f.Path] = true
		}
	}
	if receipts == nil {
		t.Fatalf("no receipts file in %+v", out.files)
	}
	b, err := os.ReadFile(filepath.Join(dir, receipts.Path))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ReadReceipts(b)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(spool)
	if doc.From != 0 || doc.Next != fi.Size() || doc.Lines != 5 || receipts.Path != "notifications/receipts_0_"+strconv.FormatInt(doc.Next, 10)+".json" {
		t.Errorf("receipts read %d..%d (%d lines) into %s; the spool has %d bytes", doc.From, doc.Next, doc.Lines, receipts.Path, fi.Size())
	}
	want := map[string]struct {
		fetch string
		count int
	}{idOK: {FetchFetched, 2}, idGone: {FetchNotFound, 1}, idBroken: {FetchFailed, 1}, idLoaded: {FetchLoaded, 1}, idRetried: {FetchFetched, 0}}
	for _, r := range doc.Receipts {
		if wr := want[r.MsgID]; r.Fetch != wr.fetch || r.Count != wr.count {
			t.Errorf("%s: fetch %s count %d, want %s %d (%s)", r.MsgID, r.Fetch, r.Count, wr.fetch, wr.count, r.Error)
		}
		if (r.Fetch == FetchFetched) != fetched[r.Path] || (r.Fetch == FetchFetched) != (r.Path != "") {
			t.Errorf("%s: path %q, files %v", r.MsgID, r.Path, fetched)
		}
		delete(want, r.MsgID)
	}
	if len(want) != 0 {
		t.Errorf("no receipt of %v", want)
	}
	if gets[idOK] != 1 || gets[idLoaded] != 0 || gets[idGone] != 1 || gets[idBroken] != 5 {
		t.Errorf("GETs %v: want one per id, none of the loaded one, 5 attempts of the failing one", gets)
	}
	if len(out.incomplete) != 0 {
		t.Errorf("unfetched ids made the run incomplete: %v", out.incomplete)
	}
}

// TestExtractNotificationsNothingNew: a spool read past its end gives no file.
func TestExtractNotificationsNothingNew(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	c := newTestClient(t, mux)
	spool := spoolOf(t, idOK)
	fi, _ := os.Stat(spool)
	if err := webhook.Commit(spool, fi.Size()); err != nil {
		t.Fatal(err)
	}
	w, _ := raw.ParseWindow("2026-10-01", "2026-10-01")
	out, err := c.extractNotifications(c.withRun(context.Background()), Notifications{Spool: spool}, w, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out.files {
		if strings.HasPrefix(f.Source, "notification") {
			t.Errorf("file %s after nothing new", f.Path)
		}
	}
}

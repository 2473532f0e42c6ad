package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"time"

	"golang.org/x/sync/errgroup"

	"recon/extract/raw"
	"recon/extract/webhook"
)

// Fetch outcomes of a spooled msg_id (Receipt.Fetch, notifications.fetch_status).
const (
	FetchFetched  = "FETCHED"   // the full notification was read (its file is Receipt.Path)
	FetchNotFound = "NOT_FOUND" // the server API answered 404
	FetchFailed   = "FAILED"    // any other failure, after the run's retries
	FetchLoaded   = "LOADED"    // fetched by an earlier run: only its receipts are counted
)

// Notifications says what a run takes from the webhook spool. A zero value
// leaves the source out.
type Notifications struct {
	Spool string // the receiver's spool file (RECON_WEBHOOK_SPOOL)
	// Loaded are the msg_ids an earlier run fetched: counted, not fetched again.
	Loaded map[string]bool
	// Retry are msg_ids an earlier run could not fetch: fetched again, without new receipts.
	Retry []string
}

// IsZero reports whether the source is off.
func (n Notifications) IsZero() bool { return n.Spool == "" }

// Receipts is the document of a SourceNotificationReceipt file.
type Receipts struct {
	Spool     string    `json:"spool"`
	From      int64     `json:"from"`      // spool offset the read started at
	Next      int64     `json:"next"`      // offset after the last whole line read: committed once the run published
	Lines     int       `json:"lines"`     // whole lines read
	Malformed int       `json:"malformed"` // lines that were not a record
	Reset     bool      `json:"reset"`     // the spool was shorter than the committed offset: read from 0
	Receipts  []Receipt `json:"receipts"`
}

// Receipt is one msg_id of a run: its deliveries in the range read and its fetch.
type Receipt struct {
	MsgID   string    `json:"msg_id"`
	First   time.Time `json:"first_received_at,omitzero"` // zero for a Retry without new deliveries
	Last    time.Time `json:"last_received_at,omitzero"`
	Count   int       `json:"count"` // deliveries in the range read (duplicates included)
	Fetch   string    `json:"fetch"` // Fetch* constant
	Error   string    `json:"error,omitempty"`
	Path    string    `json:"path,omitempty"` // the notification's raw file when FETCHED
	Request string    `json:"request,omitempty"`
}

// ReadReceipts reads a SourceNotificationReceipt file's document.
func ReadReceipts(b []byte) (Receipts, error) {
	var r Receipts
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("not a receipts document: %w", err)
	}
	return r, nil
}

// notificationWorkers bounds the notifications fetched at once.
const notificationWorkers = 4

func (c *Client) notificationURL(msgID string) string {
	return c.cfg.ServerURL + PathNotification + msgID
}

// notificationPath is the raw file of one notification.
func notificationPath(msgID string) string {
	return path.Join("notifications", safeName(msgID)+".json")
}

// notificationJobs: the spooled msg_ids not fetched before, when asked.
func (c *Client) notificationJobs(req Request, dir string) []job {
	n := req.Notifications
	if n.IsZero() {
		return nil
	}
	return []job{{
		call: Call{What: "notifications", Window: req.Server, Request: "GET " + c.notificationURL("{msg_id}"),
			Then: "once per msg_id of " + n.Spool + " past its committed offset, not fetched before"},
		run: func(ctx context.Context) (outcome, error) { return c.extractNotifications(ctx, n, req.Server, dir) },
	}}
}

// extractNotifications reads the spool from its committed offset and
// fetches each msg_id not loaded before (and each to retry). A msg_id the
// API answers 404 for, or still fails for after the retries, is recorded
// as NOT_FOUND or FAILED in the receipts file: never fatal for the run. A
// spool that cannot be read makes the source not pulled (notPulled). w is
// the window the files record (the rules held when the spool fails).
func (c *Client) extractNotifications(ctx context.Context, n Notifications, w raw.Window, dir string) (outcome, error) {
	off, err := webhook.Committed(n.Spool)
	var rd webhook.Read
	if err == nil {
		rd, err = webhook.ReadSpool(n.Spool, off)
	}
	if err != nil {
		return c.notPulled(ctx, raw.SourceNotificationReceipt, w, "read spool "+n.Spool, err)
	}
	doc := Receipts{Spool: n.Spool, From: rd.From, Next: rd.Next, Lines: rd.Lines, Malformed: rd.Malformed, Reset: rd.Reset}
	seen := map[string]bool{}
	for _, e := range rd.Entries {
		r := Receipt{MsgID: e.MsgID, First: e.First, Last: e.Last, Count: e.Count}
		if n.Loaded[e.MsgID] {
			r.Fetch = FetchLoaded
		}
		doc.Receipts, seen[e.MsgID] = append(doc.Receipts, r), true
	}
	for _, id := range n.Retry {
		if id, ok := webhook.ParseMsgID(id); ok && !seen[id] && !n.Loaded[id] {
			doc.Receipts, seen[id] = append(doc.Receipts, Receipt{MsgID: id}), true
		}
	}
	if len(doc.Receipts) == 0 && rd.Lines == 0 {
		return outcome{}, nil // nothing new: no file, nothing to commit
	}
	files := make([]raw.File, len(doc.Receipts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(notificationWorkers)
	for i := range doc.Receipts {
		r := &doc.Receipts[i]
		if r.Fetch == FetchLoaded {
			continue
		}
		g.Go(func() error {
			f, err := c.fetchNotification(gctx, r, w, dir)
			files[i] = f
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return outcome{}, fmt.Errorf("notifications: %w", err)
	}
	var out outcome
	unfetched := 0
	for i, r := range doc.Receipts {
		switch r.Fetch {
		case FetchFetched:
			out.files = append(out.files, files[i])
		case FetchNotFound, FetchFailed:
			unfetched++
		}
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return outcome{}, err
	}
	f := raw.File{Source: raw.SourceNotificationReceipt, Format: raw.FormatJSON, Status: raw.StatusReady, Window: w,
		Path: fmt.Sprintf("notifications/receipts_%d_%d.json", doc.From, doc.Next), Request: "read spool " + n.Spool}
	if f.SHA256, f.Size, err = c.save(ctx, dir, f.Path, append(b, '\n')); err != nil {
		return outcome{}, fmt.Errorf("notification receipts: %w", err)
	}
	out.files = append(out.files, f)
	if unfetched > 0 {
		c.log.Warn("notifications not fetched", "count", unfetched, "of", len(doc.Receipts))
	}
	c.log.Info("notifications", "spool_from", doc.From, "spool_next", doc.Next, "ids", len(doc.Receipts),
		"fetched", len(out.files)-1, "unfetched", unfetched, "malformed_lines", doc.Malformed)
	return out, nil
}

// fetchNotification GETs one notification into its raw file and records the
// outcome in r. Only a failure to write it, or the run's end, is an error.
func (c *Client) fetchNotification(ctx context.Context, r *Receipt, w raw.Window, dir string) (raw.File, error) {
	r.Request = "GET " + c.notificationURL(r.MsgID)
	f := raw.File{Source: raw.SourceNotification, Format: raw.FormatJSON, Status: raw.StatusReady, Window: w,
		Path: notificationPath(r.MsgID), Request: r.Request}
	if err := c.runOf(ctx).claim(f.Path, r.MsgID); err != nil {
		return f, err
	}
	body, _, err := c.getRaw(ctx, "notification "+r.MsgID, c.notificationURL(r.MsgID))
	if err == nil && !json.Valid(body) {
		err = errors.New("the answer is not JSON")
	}
	switch ae, _ := errors.AsType[*APIError](err); {
	case err == nil:
	case ctx.Err() != nil:
		return f, err
	case ae != nil && ae.Status == http.StatusNotFound:
		r.Fetch, r.Error = FetchNotFound, err.Error()
		return f, nil
	default:
		r.Fetch, r.Error = FetchFailed, err.Error()
		return f, nil
	}
	if f.SHA256, f.Size, err = c.save(ctx, dir, f.Path, body); err != nil {
		return f, fmt.Errorf("notification %s: %w", r.MsgID, err)
	}
	r.Fetch, r.Path = FetchFetched, f.Path
	return f, nil
}

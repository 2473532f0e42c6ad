package pipeline_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/extract/webhook"
	"recon/pipeline"
)

const webhookToken = "test-token-0123456789abcdef"

// webhookEnv is newEnv with webhooks: a real receiver on loopback (its
// clock inside the window, its spool in a temporary folder) is the
// sandbox's callback, and the sandbox's deliveries have all settled when it
// returns, with the count of deliveries accepted.
func webhookEnv(t *testing.T, days int, faults ...sandbox.Faults) (*env, int64) {
	t.Helper()
	spool := filepath.Join(t.TempDir(), "recon-webhook.spool")
	rc, err := webhook.New(webhook.Config{Spool: spool, Token: extract.Secret(webhookToken),
		Now: func() time.Time { return day0.AddDate(0, 0, 3) }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rc)
	t.Cleanup(func() { srv.Close(); rc.Close() })
	cfg := envSandbox(days, faults...)
	cfg.WebhookURL = srv.URL + webhook.PathPrefix + webhookToken
	e := newEnvFor(t, cfg)
	e.cfg.WebhookSpool = spool
	return e, deliver(t, e)
}

// deliver sends the sandbox's webhooks and waits until they all settled.
func deliver(t *testing.T, e *env) int64 {
	t.Helper()
	d, err := e.sb.Deliver(context.Background())
	if err != nil || d.Failed != 0 {
		t.Fatalf("deliveries %+v: %v", d, err)
	}
	return d.Sent
}

// TestNotificationsSpoolCommittedOnlyWhenPublished: a run that fails
// before publishing leaves the spool offset where it was, so the next run
// reads the same ids; a published run commits it; a later run counts the
// deliveries it reads on top, without fetching a notification again.
func TestNotificationsSpoolCommittedOnlyWhenPublished(t *testing.T) {
	e, sent := webhookEnv(t, 2)
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 1))
	spool := e.cfg.WebhookSpool
	fi, err := os.Stat(spool)
	if err != nil {
		t.Fatal(err)
	}

	// A rule that fails after the load: nothing is published, nothing committed.
	bad := e.cfg
	bad.RulesDir = t.TempDir()
	if err := os.WriteFile(filepath.Join(bad.RulesDir, "fails.sql"), []byte(
		"-- id: fails\n-- severity: P4\n-- description: a null break_key fails the run\n-- reads: notifications\n"+
			"SELECT NULL AS break_key, first_received_at AS event_at FROM notifications\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Run(context.Background(), bad, w); err == nil {
		t.Fatal("the run with a failing rule published")
	}
	if off, err := webhook.Committed(spool); err != nil || off != 0 {
		t.Fatalf("after a run that did not publish the spool offset is %d (%v), want 0", off, err)
	}

	e.run(t, w)
	if off, err := webhook.Committed(spool); err != nil || off != fi.Size() {
		t.Fatalf("after a published run the spool offset is %d (%v), want %d", off, err, fi.Size())
	}
	counts := func() (ids, deliveries, fetched int64) {
		t.Helper()
		db := openRO(t, e.cfg.DB)
		defer db.Close() // closed before the next run publishes (see keys)
		if err := db.QueryRow(`SELECT count(*), sum(received_count), count(*) FILTER (WHERE fetch_status = 'FETCHED')
			FROM notifications`).Scan(&ids, &deliveries, &fetched); err != nil {
			t.Fatal(err)
		}
		return
	}
	ids, deliveries, fetched := counts()
	if deliveries != sent || fetched != ids-3 {
		t.Errorf("notifications: %d ids (%d fetched), %d deliveries; the sandbox made %d deliveries of which 3 ids are unknown",
			ids, fetched, deliveries, sent)
	}

	gets := e.sb.Requests()["GET /v4/orchestration/payment/notification/{msg_id}"]
	again := deliver(t, e) // every delivery once more
	e.run(t, w)
	ids2, deliveries2, fetched2 := counts()
	if ids2 != ids || fetched2 != fetched || deliveries2 != sent+again {
		t.Errorf("after a second delivery: %d ids (%d fetched), %d deliveries; want %d (%d), %d", ids2, fetched2, deliveries2, ids, fetched, sent+again)
	}
	if n := e.sb.Requests()["GET /v4/orchestration/payment/notification/{msg_id}"] - gets; n != 3 {
		t.Errorf("the second run made %d GETs of notifications, want 3 (the unknown ids, tried again)", n)
	}
}

package sandbox_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"recon/extract"
	"recon/extract/sandbox"
)

// TestWebhookDeliveries: Deliver sends every planned notification to the
// callback, retrying a refused delivery, with some ids twice; each id the
// server knows is served by GET, the injected unknown ones answer 404; the
// truth holds three breaks of each notification rule.
func TestWebhookDeliveries(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	refused := map[string]bool{}
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			MsgID string `json:"msg_id"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &b); err != nil || r.Method != http.MethodPost || r.URL.Path != "/webhook/tok" {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !refused[b.MsgID] { // every id's first delivery is refused once: the sender retries
			refused[b.MsgID] = true
			http.Error(w, "later", http.StatusServiceUnavailable)
			return
		}
		got[b.MsgID]++
	}))
	defer cb.Close()
	e := start(t, sandbox.Config{Days: 7, WebhookURL: cb.URL + "/webhook/tok"})
	d, err := e.s.Deliver(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Failed != 0 || d.Sent == 0 {
		t.Fatalf("deliveries %+v", d)
	}
	var total, dup int64
	tok := e.token(t)
	known, unknown := 0, 0
	for id, n := range got {
		total += int64(n)
		if n > 1 {
			dup++
		}
		resp, b := e.call(t, "GET", "/v4"+extract.PathNotification+id, tok, nil)
		switch resp.StatusCode {
		case 200:
			var n struct {
				UUID    string `json:"uuid"`
				Payload struct {
					PaymentID string `json:"payment_id"`
				} `json:"notification_payload"`
			}
			if err := json.Unmarshal(b, &n); err != nil || n.UUID != id || n.Payload.PaymentID == "" {
				t.Errorf("notification %s: %s", id, b)
			}
			known++
		case 404:
			unknown++
		default:
			t.Errorf("GET notification %s: %d %s", id, resp.StatusCode, b)
		}
	}
	if total != d.Sent || dup == 0 || known < 20 || unknown != 3 {
		t.Errorf("delivered %d (%d ids twice or more; Deliver says %d), %d known ids, %d unknown (want 3)", total, dup, d.Sent, known, unknown)
	}
	per := map[string]int{}
	for _, b := range e.s.Truth().Breaks {
		per[b.RuleID]++
	}
	for _, r := range []string{"notification_missing_transition", "notification_state_mismatch", "notification_unfetched"} {
		if per[r] != 3 {
			t.Errorf("truth has %d breaks of %s, want 3", per[r], r)
		}
	}
}

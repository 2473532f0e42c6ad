package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"recon/extract/raw"
)

// Values that must never show up in errors, logs or files.
const (
	testSecret  = "s3cret-VALUE-9f8e7d"
	tokenPrefix = "TOKEN-zq81-"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// bearer returns the token of r, "" if none.
func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// tokenServer is a fake token endpoint that issues TOKEN-zq81-1, -2, …
// to the client holding testSecret (in the body or a Basic header).
type tokenServer struct {
	n         atomic.Int32
	expiresIn int           // seconds; 0 means 3600
	delay     time.Duration // before answering
	last      atomic.Pointer[tokenCall]
}

type tokenCall struct {
	body   map[string]string
	header http.Header
}

func (ts *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := ts.n.Add(1)
	time.Sleep(ts.delay)
	var body map[string]string
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.Header.Get("Content-Type") != "application/json" {
		writeJSON(w, 400, map[string]string{"error": "invalid_request", "error_description": "want a JSON body"})
		return
	}
	ts.last.Store(&tokenCall{body, r.Header.Clone()})
	secret := body["client_secret"]
	if _, s, ok := r.BasicAuth(); ok {
		secret = s
	}
	if secret != testSecret || body["grant_type"] != "client_credentials" {
		writeJSON(w, 401, map[string]string{"error": "access_denied", "error_description": "bad credentials"})
		return
	}
	exp := ts.expiresIn
	if exp == 0 {
		exp = 3600
	}
	writeJSON(w, 200, map[string]any{"access_token": fmt.Sprint(tokenPrefix, n), "expires_in": exp, "token_type": "Bearer", "scope": "reports:read"})
}

// newTestClient serves h on loopback as every service and returns a client
// with zero retry delays (5 attempts) and 1ms report polls.
func newTestClient(t *testing.T, h http.Handler, mods ...func(*Config)) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := Config{
		AuthURL: srv.URL, ClientID: "client-1", ClientSecret: testSecret, Audience: "urn:recon-test:t1",
		ReportingURL: srv.URL, ServerURL: srv.URL + "/v4",
		Retry:        RetryPolicy{MaxAttempts: 5},
		PollInterval: time.Millisecond,
	}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recordWaits makes c's waits return at once and returns what they were asked to wait.
func recordWaits(c *Client) func() []time.Duration {
	var mu sync.Mutex
	var got []time.Duration
	c.wait = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d)
		return ctx.Err()
	}
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), got...)
	}
}

// reportJSON is a report record as the fake reporting service sends it.
func reportJSON(id, status, link string) map[string]any {
	return map[string]any{
		"reportId": id, "reportName": "n", "reportType": raw.ReportRecon, "reportFormat": raw.FormatCSV, "reportStatus": status,
		"startDate": "2026-01-01T00:00:00.000Z", "endDate": "2026-01-31T23:59:59.999Z", "downloadLink": link,
	}
}

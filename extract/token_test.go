package extract

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
)

// reportsMux serves the token endpoint and GET /v1/reports/{id} (a READY report), counting calls.
func reportsMux(ts *tokenServer, calls *atomic.Int32, auth *atomic.Value) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", ts)
	mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if auth != nil {
			auth.Store(r.Header.Get("Authorization"))
		}
		writeJSON(w, 200, reportJSON(r.PathValue("id"), raw.StatusReady, ""))
	})
	return mux
}

func TestTokenRequest(t *testing.T) {
	tests := []struct {
		name       string
		basic      bool
		wantBody   map[string]string
		wantHeader string
	}{
		{
			name: "json body",
			wantBody: map[string]string{
				"client_id": "client-1", "client_secret": testSecret, "audience": "urn:recon-test:t1", "grant_type": "client_credentials",
			},
		},
		{
			name:       "basic header",
			basic:      true,
			wantBody:   map[string]string{"audience": "urn:recon-test:t1", "grant_type": "client_credentials"},
			wantHeader: "Basic " + base64.StdEncoding.EncodeToString([]byte("client-1:"+testSecret)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := &tokenServer{}
			var calls atomic.Int32
			var auth atomic.Value
			c := newTestClient(t, reportsMux(ts, &calls, &auth), func(c *Config) { c.BasicAuth = tt.basic })
			if _, err := c.GetReport(t.Context(), "r1"); err != nil {
				t.Fatal(err)
			}
			got := ts.last.Load()
			if diff := cmp.Diff(tt.wantBody, got.body); diff != "" {
				t.Errorf("token body (-want +got):\n%s", diff)
			}
			if h := got.header.Get("Authorization"); h != tt.wantHeader {
				t.Errorf("token Authorization = %q, want %q", h, tt.wantHeader)
			}
			if a := auth.Load(); a != "Bearer "+tokenPrefix+"1" {
				t.Errorf("service Authorization = %q", a)
			}
		})
	}
}

func TestTokenCachedUntilNearExpiry(t *testing.T) {
	tests := []struct {
		name       string
		expiresIn  int
		after      time.Duration
		wantTokens int32
	}{
		{"reused", 3600, 0, 1},
		{"reused until expiry minus skew", 3600, 3539 * time.Second, 1},
		{"renewed within skew", 3600, 3541 * time.Second, 2},
		{"short lifetime reused until half", 60, 29 * time.Second, 1},
		{"short lifetime renewed after half", 60, 31 * time.Second, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := &tokenServer{expiresIn: tt.expiresIn}
			var calls atomic.Int32
			c := newTestClient(t, reportsMux(ts, &calls, nil))
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			c.auth.tokens.now = func() time.Time { return now }
			for _, d := range []time.Duration{0, tt.after} {
				now = now.Add(d)
				if _, err := c.GetReport(t.Context(), "r1"); err != nil {
					t.Fatal(err)
				}
			}
			if got := ts.n.Load(); got != tt.wantTokens {
				t.Errorf("token requests = %d, want %d", got, tt.wantTokens)
			}
		})
	}
}

func TestUnauthorizedRefreshesOnceAndRetriesOnce(t *testing.T) {
	tests := []struct {
		name       string
		rejected   func(tok string) bool
		wantErr    int // HTTP status, 0 for success
		wantTokens int32
		wantCalls  int32
	}{
		{"revoked token", func(tok string) bool { return tok == tokenPrefix+"1" }, 0, 2, 2},
		{"always 401", func(string) bool { return true }, 401, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := &tokenServer{}
			var calls atomic.Int32
			mux := http.NewServeMux()
			mux.Handle("POST /v2/oauth/token", ts)
			mux.HandleFunc("POST /v1/reports", func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				var body map[string]string
				if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body["reportType"] != raw.ReportRecon {
					t.Errorf("replayed body not intact: %v %v", body, err)
				}
				if tt.rejected(bearer(r)) {
					writeJSON(w, 401, map[string]string{"error": "invalid_token"})
					return
				}
				writeJSON(w, 201, reportJSON("r1", StatusPending, ""))
			})
			c := newTestClient(t, mux)
			w, _ := raw.ParseWindow("2026-01-01", "2026-01-31")
			_, err := c.CreateReport(t.Context(), raw.ReportRecon, raw.FormatCSV, w)
			checkStatus(t, err, tt.wantErr)
			if got := ts.n.Load(); got != tt.wantTokens {
				t.Errorf("token requests = %d, want %d", got, tt.wantTokens)
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("service requests = %d, want %d", got, tt.wantCalls)
			}
		})
	}
}

// checkStatus fails unless err is nil (want 0) or an APIError with status want.
func checkStatus(t *testing.T, err error, want int) {
	t.Helper()
	if want == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	ae, ok := errors.AsType[*APIError](err)
	if !ok || ae.Status != want {
		t.Fatalf("error = %v, want an APIError with status %d", err, want)
	}
}

func TestBadCredentialsFailOnce(t *testing.T) {
	ts := &tokenServer{}
	var calls atomic.Int32
	c := newTestClient(t, reportsMux(ts, &calls, nil), func(c *Config) { c.ClientSecret = "wrong-" + testSecret })
	for range 3 {
		_, err := c.GetReport(t.Context(), "r1")
		if err == nil || !strings.Contains(err.Error(), "token: access_denied: bad credentials (HTTP 401)") {
			t.Fatalf("error = %v, want the token endpoint's reason", err)
		}
		if IsRetryable(err) || strings.Contains(err.Error(), testSecret) {
			t.Fatalf("error %q is retryable or holds the secret", err)
		}
	}
	if got := ts.n.Load(); got != 1 {
		t.Errorf("token requests = %d, want 1", got)
	}
	if got := calls.Load(); got != 0 {
		t.Errorf("service requests = %d, want 0", got)
	}
}

func TestConcurrentCallersShareOneToken(t *testing.T) {
	ts := &tokenServer{delay: 50 * time.Millisecond}
	var calls atomic.Int32
	c := newTestClient(t, reportsMux(ts, &calls, nil))
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := c.GetReport(t.Context(), "r1"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := ts.n.Load(); got != 1 {
		t.Errorf("token requests = %d, want 1", got)
	}
}

func TestTokenOnlyForServiceHosts(t *testing.T) {
	var fileAuth atomic.Value
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fileAuth.Store(r.Header.Get("Authorization"))
		w.Write([]byte("a,b\n1,2\n"))
	}))
	defer files.Close()
	link := files.URL + "/bucket/r1.csv?X-Signature=sig-abc"

	var reportAuth atomic.Value
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		reportAuth.Store(r.Header.Get("Authorization"))
		writeJSON(w, 200, reportJSON("r1", raw.StatusReady, link))
	})
	c := newTestClient(t, mux)
	r, err := c.GetReport(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f, err := c.DownloadReport(t.Context(), r, dir, raw.SourceRecon)
	if err != nil {
		t.Fatal(err)
	}
	if got := reportAuth.Load(); got != "Bearer "+tokenPrefix+"1" {
		t.Errorf("reporting host Authorization = %q, want the bearer token", got)
	}
	if got := fileAuth.Load(); got != "" {
		t.Errorf("download host Authorization = %q, want none", got)
	}
	if want := "GET " + files.URL + "/bucket/r1.csv"; f.Request != want {
		t.Errorf("Request = %q, want %q (no signed query)", f.Request, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "reports", "RECON", "r1.csv")); err != nil || string(b) != "a,b\n1,2\n" {
		t.Errorf("file = %q, %v", b, err)
	}
}

package extract

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"recon/extract/raw"
)

// elsewhere is another host that counts the requests it gets and whether
// any carried the client secret (in the body or a Basic header).
type elsewhere struct {
	srv             *httptest.Server
	calls, secretIn atomic.Int32
}

func newElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.calls.Add(1)
		b, _ := io.ReadAll(r.Body)
		if _, s, _ := r.BasicAuth(); strings.Contains(string(b), testSecret) || s == testSecret {
			e.secretIn.Add(1)
		}
		writeJSON(w, 200, map[string]any{"access_token": "stolen", "expires_in": 3600, "token_type": "Bearer"})
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// TestTokenRedirectRefused: a token endpoint that answers 307 or 308 to
// another host gets a clear error (status and host, never the secret), and
// the other host never sees the secret.
func TestTokenRedirectRefused(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, basic := range []bool{false, true} {
			t.Run(http.StatusText(status)+map[bool]string{false: " body", true: " basic"}[basic], func(t *testing.T) {
				e := newElsewhere(t)
				mux := http.NewServeMux()
				mux.HandleFunc("POST /v2/oauth/token", func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, e.srv.URL+"/v2/oauth/token", status)
				})
				mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
					writeJSON(w, 200, reportJSON("r1", raw.StatusReady, ""))
				})
				c := newTestClient(t, mux, func(c *Config) { c.BasicAuth = basic })
				_, err := c.GetReport(t.Context(), "r1")
				if !errors.Is(err, ErrRedirect) {
					t.Fatalf("error = %v, want ErrRedirect", err)
				}
				host := strings.TrimPrefix(e.srv.URL, "http://")
				if msg := err.Error(); !strings.Contains(msg, "HTTP "+strconv.Itoa(status)) || !strings.Contains(msg, host) || strings.Contains(msg, testSecret) {
					t.Errorf("error %q: want the status and host %s, and no secret", msg, host)
				}
				if e.calls.Load() != 0 || e.secretIn.Load() != 0 {
					t.Errorf("the other host got %d requests, %d with the secret", e.calls.Load(), e.secretIn.Load())
				}
			})
		}
	}
}

// TestPostRedirectRefused: a report's creation answered with a redirect is
// not sent on (nor retried); a GET's redirect is still followed.
func TestPostRedirectRefused(t *testing.T) {
	e := newElsewhere(t)
	var posts atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("POST /v1/reports", func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		http.Redirect(w, r, e.srv.URL+"/v1/reports", http.StatusPermanentRedirect)
	})
	mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v1/moved/"+r.PathValue("id"), http.StatusFound)
	})
	mux.HandleFunc("GET /v1/moved/{id}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, reportJSON(r.PathValue("id"), raw.StatusReady, ""))
	})
	c := newTestClient(t, mux)
	_, err := c.CreateReport(t.Context(), raw.ReportRecon, raw.FormatCSV, mustWindow(t, "2026-01-01", "2026-01-31"))
	if !errors.Is(err, ErrRedirect) || posts.Load() != 1 || e.calls.Load() != 0 {
		t.Fatalf("error = %v after %d posts, %d requests elsewhere; want ErrRedirect after 1, none elsewhere", err, posts.Load(), e.calls.Load())
	}
	if r, err := c.GetReport(t.Context(), "r1"); err != nil || r.ID != "r1" {
		t.Errorf("GET through a redirect = %+v, %v", r, err)
	}
}

// TestPlainHTTPRefused: http:// service URLs are refused unless the host is
// loopback or InsecureHTTP is set (pipeline.Config.Validate checks every
// service URL with CheckBaseURL).
func TestPlainHTTPRefused(t *testing.T) {
	tests := []struct {
		base     string
		insecure bool
		ok       bool
	}{
		{"https://api.example.com", false, true},
		{"http://api.example.com", false, false},
		{"http://10.0.0.7:8080", false, false},
		{"http://api.example.com", true, true},
		{"http://127.0.0.1:8080", false, true},
		{"http://localhost:8080", false, true},
		{"http://[::1]:8080", false, true},
	}
	for _, tt := range tests {
		err := CheckBaseURL(tt.base, tt.insecure)
		if (err == nil) != tt.ok {
			t.Errorf("CheckBaseURL(%s, insecure %v) = %v, want ok %v", tt.base, tt.insecure, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--insecure-http") {
			t.Errorf("error %q does not name --insecure-http", err)
		}
	}
}

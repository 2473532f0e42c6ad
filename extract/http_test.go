package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
)

// reply is one scripted answer of a fake service.
type reply struct {
	status     int    // 0: hang up without answering (a transport error)
	retryAfter string // Retry-After header
}

func TestRetries(t *testing.T) {
	ok := reply{status: 200}
	tests := []struct {
		name      string
		script    []reply // answers in order; the last one repeats
		wantCalls int32
		wantWaits []time.Duration
		wantErr   int // HTTP status of the final error, 0 for success
	}{
		{"429 with Retry-After seconds", []reply{{429, "2"}, ok}, 2, []time.Duration{2 * time.Second}, 0},
		{"429 with Retry-After date", []reply{{429, "date+10s"}, ok}, 2, []time.Duration{10 * time.Second}, 0},
		{"Retry-After capped at MaxDelay", []reply{{429, "3600"}, ok}, 2, []time.Duration{time.Minute}, 0},
		{"503 twice", []reply{{503, ""}, {503, ""}, ok}, 3, []time.Duration{0, 0}, 0},
		{"502 and 504", []reply{{502, ""}, {504, ""}, ok}, 3, []time.Duration{0, 0}, 0},
		{"transport error", []reply{{0, ""}, ok}, 2, []time.Duration{0}, 0},
		{"503 until attempts run out", []reply{{503, ""}}, 5, []time.Duration{0, 0, 0, 0}, 503},
		{"400 not retried", []reply{{400, ""}}, 1, nil, 400},
		{"500 not retried", []reply{{500, ""}}, 1, nil, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			mux := http.NewServeMux()
			mux.Handle("POST /v2/oauth/token", &tokenServer{})
			mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
				rp := tt.script[min(int(calls.Add(1)), len(tt.script))-1]
				switch {
				case rp.status == 0:
					conn, _, err := w.(http.Hijacker).Hijack()
					if err != nil {
						t.Error(err)
						return
					}
					conn.Close()
					return
				case rp.retryAfter == "date+10s":
					// HTTP dates have whole seconds: round up so the wait is 10s at most 1s short.
					w.Header().Set("Retry-After", time.Now().Add(11*time.Second).Truncate(time.Second).UTC().Format(http.TimeFormat))
				case rp.retryAfter != "":
					w.Header().Set("Retry-After", rp.retryAfter)
				}
				if rp.status != 200 {
					writeJSON(w, rp.status, map[string]string{"title": http.StatusText(rp.status)})
					return
				}
				writeJSON(w, 200, reportJSON("r1", raw.StatusReady, ""))
			})
			c := newTestClient(t, mux, func(c *Config) {
				c.Retry.MaxDelay = time.Minute
				// A fresh connection per request, so a hang-up is never replayed by net/http itself.
				c.HTTPClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			})
			waits := recordWaits(c)
			_, err := c.GetReport(t.Context(), "r1")
			checkStatus(t, err, tt.wantErr)
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("requests = %d, want %d", got, tt.wantCalls)
			}
			approx := cmp.Comparer(func(a, b time.Duration) bool { return (a - b).Abs() <= time.Second })
			if diff := cmp.Diff(tt.wantWaits, waits(), approx); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLateHeadersRetried: an answer whose headers come after the wait is
// dropped with ErrNoHeaders and asked again; a body that starts in time may
// take as long as it takes.
func TestLateHeadersRetried(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select { // headers only after the client gave up
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		time.Sleep(100 * time.Millisecond) // longer than the header wait
		io.WriteString(w, "body")
	})
	c := newTestClient(t, mux)
	waits := recordWaits(c)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, c.cfg.ReportingURL+"/slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	err = c.do(t.Context(), "slow", req, limits{headers: 20 * time.Millisecond}, func(resp *http.Response) (err error) {
		body, err = io.ReadAll(resp.Body)
		return err
	})
	if err != nil || string(body) != "body" {
		t.Fatalf("do = %q, %v; want the body of the second answer", body, err)
	}
	if n := calls.Load(); n != 2 || len(waits()) != 1 {
		t.Errorf("%d requests, want 2 (the first dropped for its late headers)", n)
	}
}

func TestCancelStopsBackoffWait(t *testing.T) {
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "60")
		writeJSON(w, 503, map[string]string{"title": "busy"})
	})
	c := newTestClient(t, mux, func(c *Config) { c.Retry = RetryPolicy{MaxAttempts: 5, MaxDelay: time.Minute} })
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.GetReport(ctx, "r1")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("returned after %v, want promptly after cancel", d)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("requests = %d, want 1", got)
	}
}

func TestAPIErrorShapes(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		header  string // X-Request-Id
		body    string
		want    APIError
		wantMsg string
	}{
		{
			name:    "reporting",
			status:  400,
			body:    `{"type":"about:blank","errorCode":"RPT_2","title":"Invalid date range","detail":"more than 90 days","time":"2026-01-01T00:00:00.000Z"}`,
			want:    APIError{Status: 400, Code: "RPT_2", Title: "Invalid date range", Detail: "more than 90 days"},
			wantMsg: "get report r1: RPT_2: Invalid date range: more than 90 days (HTTP 400)",
		},
		{
			name:    "liquidation",
			status:  404,
			body:    `{"type":"about:blank","title":"Not Found","status":404,"detail":"no such liquidation","correlationId":"c-77","timestamp":"2026-01-01T00:00:00Z"}`,
			want:    APIError{Status: 404, Title: "Not Found", Detail: "no such liquidation", RequestID: "c-77"},
			wantMsg: "get report r1: Not Found: no such liquidation (HTTP 404, request c-77)",
		},
		{
			name:    "server API",
			status:  409,
			body:    `{"type":"about:blank","title":"Conflict","detail":"payment locked","status":409,"ripplenet_error_code":"E0104","finality":"FINAL"}`,
			want:    APIError{Status: 409, Code: "E0104", Title: "Conflict", Detail: "payment locked"},
			wantMsg: "get report r1: E0104: Conflict: payment locked (HTTP 409)",
		},
		{
			name:    "token",
			status:  403,
			body:    `{"error":"access_denied","error_description":"bad credentials"}`,
			want:    APIError{Status: 403, Code: "access_denied", Detail: "bad credentials"},
			wantMsg: "get report r1: access_denied: bad credentials (HTTP 403)",
		},
		{
			name:    "not JSON",
			status:  500,
			header:  "req-9",
			body:    "<html>\n  upstream   broke\n</html>",
			want:    APIError{Status: 500, Detail: "<html> upstream broke </html>", RequestID: "req-9"},
			wantMsg: "get report r1: <html> upstream broke </html> (HTTP 500, request req-9)",
		},
		{
			name:    "empty",
			status:  404,
			want:    APIError{Status: 404},
			wantMsg: "get report r1: Not Found (HTTP 404)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("POST /v2/oauth/token", &tokenServer{})
			mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
				if tt.header != "" {
					w.Header().Set("X-Request-Id", tt.header)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			_, err := newTestClient(t, mux).GetReport(t.Context(), "r1")
			ae, ok := errors.AsType[*APIError](err)
			if !ok {
				t.Fatalf("error = %v, want an APIError", err)
			}
			if diff := cmp.Diff(tt.want, *ae); diff != "" {
				t.Errorf("APIError (-want +got):\n%s", diff)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("message = %q, want %q", err, tt.wantMsg)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{" 7 ", 7 * time.Second},
		{"-3", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.header, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestDelayIsJitteredAndCapped(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 10, BaseDelay: 500 * time.Millisecond, MaxDelay: 30 * time.Second}
	for n, bound := range map[int]time.Duration{1: 500 * time.Millisecond, 2: time.Second, 4: 4 * time.Second, 9: 30 * time.Second} {
		for range 100 {
			if d := p.delay(n, 0); d < 0 || d > bound {
				t.Fatalf("delay(%d) = %v, want within [0, %v]", n, d, bound)
			}
		}
	}
	if d := p.delay(1, 5*time.Second); d != 5*time.Second {
		t.Errorf("delay with Retry-After 5s = %v", d)
	}
}

func TestIsRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"429", fmt.Errorf("op: %w", &APIError{Status: 429}), true},
		{"503", &APIError{Status: 503}, true},
		{"400", &APIError{Status: 400}, false},
		{"401", &APIError{Status: 401}, false},
		{"500", &APIError{Status: 500}, false},
		{"transport", &url.Error{Op: "Get", URL: "http://x", Err: errors.New("connection reset by peer")}, true},
		{"truncated", fmt.Errorf("download: %w", ErrTruncated), true},
		{"late headers", fmt.Errorf("GET http://x: %w after 1m0s", ErrNoHeaders), true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"canceled", &url.Error{Op: "Get", URL: "http://x", Err: context.Canceled}, false},
		{"deadline", context.DeadlineExceeded, false},
		{"decode", &strconv.NumError{Func: "Atoi", Num: "x", Err: strconv.ErrSyntax}, false},
	}
	for _, tt := range tests {
		if got := IsRetryable(tt.err); got != tt.want {
			t.Errorf("IsRetryable(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestNewValidates: New checks the knobs a program sets; the settings are
// pipeline.Config.Validate's (TestValidateOwnsExtractSettings).
func TestNewValidates(t *testing.T) {
	_, err := New(Config{AuthURL: "http://a", ServerURL: "http://s/v4", ClientSecret: testSecret,
		Retry: RetryPolicy{BaseDelay: time.Second}, PollInterval: -time.Second})
	if err == nil {
		t.Fatal("New accepted a bad config")
	}
	for _, want := range []string{"MaxAttempts", "PollInterval"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if strings.Contains(err.Error(), testSecret) {
		t.Errorf("error %q holds the secret", err)
	}
}

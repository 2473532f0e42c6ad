package extract

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"recon/extract/raw"
)

// stall writes the headers and part of a body, then sends nothing more
// until the client goes away (or the test ends).
func stall(t *testing.T, w http.ResponseWriter, r *http.Request, status int, part string, size int) {
	t.Helper()
	w.Header().Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(status)
	io.WriteString(w, part)
	w.(http.Flusher).Flush()
	select {
	case <-r.Context().Done():
	case <-t.Context().Done():
	}
}

// bounded is t's context, ended well before the test binary's own timeout:
// a client that hangs fails the test instead of stalling the suite.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestStalledBodyRetried: an answer that sends its headers and part of its
// body, then nothing, fails with ErrStalled after BodyIdleTimeout and is
// asked again; the second answer is used. For an API answer, a report
// download (streamed to disk by writeFile) and an error answer's body.
func TestStalledBodyRetried(t *testing.T) {
	record := reportJSON("r1", raw.StatusReady, "")
	const csv = "end_to_end_id,network_payment_id\ne2e-1,p-1\n"
	var gets, downloads, balances atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		if gets.Add(1) == 1 {
			stall(t, w, r, 200, `{"reportId":`, 300)
			return
		}
		writeJSON(w, 200, record)
	})
	mux.HandleFunc("GET /v1/reports/download/{id}", func(w http.ResponseWriter, r *http.Request) {
		if downloads.Add(1) == 1 {
			stall(t, w, r, 200, csv[:10], len(csv))
			return
		}
		io.WriteString(w, csv)
	})
	mux.HandleFunc("GET /v4/monitor/balances", func(w http.ResponseWriter, r *http.Request) {
		if balances.Add(1) == 1 {
			stall(t, w, r, 503, `{"title":`, 300)
			return
		}
		writeJSON(w, 200, map[string]any{"balances": []any{}})
	})
	c := newTestClient(t, mux, func(c *Config) { c.BodyIdleTimeout = 50 * time.Millisecond })
	ctx := bounded(t)
	if _, _, err := c.Balances(ctx); err != nil || balances.Load() != 2 {
		t.Fatalf("Balances = %v after %d requests; want the 2nd to succeed", err, balances.Load())
	}
	rep, err := c.GetReport(ctx, "r1")
	if err != nil || rep.ID != "r1" || gets.Load() != 2 {
		t.Fatalf("GetReport = %+v, %v after %d requests; want r1 on the 2nd", rep, err, gets.Load())
	}
	dir := t.TempDir()
	f, err := c.DownloadReport(ctx, rep, dir, raw.SourceRecon)
	if err != nil || downloads.Load() != 2 {
		t.Fatalf("DownloadReport = %v after %d requests; want the 2nd to succeed", err, downloads.Load())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, f.Path)); string(b) != csv {
		t.Errorf("file holds %q", b)
	}
}

// TestStalledBodyGivesUp: a body that always stalls ends in ErrStalled
// once the attempts run out.
func TestStalledBodyGivesUp(t *testing.T) {
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		stall(t, w, r, 200, `{"reportId":`, 300)
	})
	c := newTestClient(t, mux, func(c *Config) {
		c.BodyIdleTimeout, c.Retry = 10*time.Millisecond, RetryPolicy{MaxAttempts: 3}
	})
	_, err := c.GetReport(bounded(t), "r1")
	if !errors.Is(err, ErrStalled) || calls.Load() != 3 {
		t.Fatalf("error = %v after %d requests, want ErrStalled after 3", err, calls.Load())
	}
}

// TestBodyCap: an API answer over MaxBodyBytes, counted after gzip, is
// refused with ErrBodyTooLarge and not asked again; one at the cap is read.
func TestBodyCap(t *testing.T) {
	const limit = 4 << 10
	page := func(n int) []byte { // a JSON document of exactly n bytes
		return []byte(`{"pad":"` + strings.Repeat("x", n-10) + `"}`)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(page(1 << 20)) // 1 MiB that compresses to about 1 KiB
	zw.Close()
	tests := []struct {
		name    string
		serve   func(w http.ResponseWriter, r *http.Request)
		wantErr error
	}{
		{"at the cap", func(w http.ResponseWriter, r *http.Request) { w.Write(page(limit)) }, nil},
		{"over, with Content-Length", func(w http.ResponseWriter, r *http.Request) { w.Write(page(limit + 1)) }, ErrBodyTooLarge},
		{"over, chunked", func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush() // no Content-Length
			w.Write(page(3 * limit))
		}, ErrBodyTooLarge},
		{"gzip that expands over", func(w http.ResponseWriter, r *http.Request) {
			if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				t.Error("the client did not ask for gzip")
			}
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.Itoa(gz.Len())) // well under the cap
			w.Write(gz.Bytes())
		}, ErrBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			mux := http.NewServeMux()
			mux.Handle("POST /v2/oauth/token", &tokenServer{})
			mux.HandleFunc("GET /v4/monitor/balances", func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				tt.serve(w, r)
			})
			c := newTestClient(t, mux, func(c *Config) { c.MaxBodyBytes = limit })
			body, _, err := c.Balances(t.Context())
			if !errors.Is(err, tt.wantErr) || calls.Load() != 1 {
				t.Fatalf("Balances = %d bytes, %v after %d requests; want %v after 1", len(body), err, calls.Load(), tt.wantErr)
			}
			if err != nil && IsRetryable(err) {
				t.Errorf("%v is retryable", err)
			}
		})
	}
}

// TestDownloadBudget: a report download has no body cap, but the raw bytes
// one Extract writes stop at MaxDownloadBytes: the download that would
// pass it fails with ErrDiskBudget, is not asked again, and leaves no file.
func TestDownloadBudget(t *testing.T) {
	const limit = 8 << 10
	body := strings.Repeat("e2e-1,p-1\n", 2*limit/10)
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("GET /v1/reports/download/{id}", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.WriteString(w, body)
	})
	rep := Report{ID: "r1", Type: raw.ReportRecon, Format: "csv", Status: raw.StatusReady,
		StartDate: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), EndDate: time.Date(2026, 1, 31, 23, 59, 59, 999e6, time.UTC)}

	// Over MaxBodyBytes but within the budget: downloaded.
	c := newTestClient(t, mux, func(c *Config) { c.MaxBodyBytes, c.MaxDownloadBytes = limit, 4*limit })
	if _, err := c.DownloadReport(t.Context(), rep, t.TempDir(), raw.SourceRecon); err != nil {
		t.Fatalf("download over the API cap: %v", err)
	}

	calls.Store(0)
	c = newTestClient(t, mux, func(c *Config) { c.MaxDownloadBytes = limit })
	dir := t.TempDir()
	_, err := c.DownloadReport(t.Context(), rep, dir, raw.SourceRecon)
	if !errors.Is(err, ErrDiskBudget) || calls.Load() != 1 {
		t.Fatalf("error = %v after %d requests, want ErrDiskBudget after 1", err, calls.Load())
	}
	left, _ := os.ReadDir(filepath.Join(dir, "reports", raw.ReportRecon))
	if len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
}

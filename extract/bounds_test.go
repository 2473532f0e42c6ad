package extract

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"recon/extract/raw"
)

// TestTransferPagingBounded: a transfers list that never says last ends in
// an error, not in endless paging: a page past the list's own total is
// refused, and so is a list longer than the page limit.
func TestTransferPagingBounded(t *testing.T) {
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		total    func(page int) int // totalElements the page claims
		max      int                // the pager's page limit (0: MaxListPages)
		wantPage int                // requests made before the error
		wantMsg  string
	}{
		{"steady total", func(int) int { return 3 }, 0, 4, "past totalElements 3"},
		{"growing total", func(page int) int { return page + 2 }, 5, 5, "more than 5 pages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			mux := http.NewServeMux()
			mux.Handle("POST /v2/oauth/token", &tokenServer{})
			mux.HandleFunc("GET /v4/transfers", func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) > 50 {
					writeJSON(w, 400, map[string]string{"title": "the client kept paging"})
					return
				}
				page, _ := strconv.Atoi(r.URL.Query().Get("page"))
				at := since.Add(time.Duration(24-page) * time.Hour) // newest first, never before since
				writeJSON(w, 200, map[string]any{"content": []map[string]any{{"id": "t" + strconv.Itoa(page), "created_at": at}},
					"last": false, "number": page, "totalElements": tt.total(page)})
			})
			c := newTestClient(t, mux)
			p := c.transferPager(since, 1)
			p.max = tt.max
			err := c.fetchPages(t.Context(), p, func(raw.Page, []byte) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) || calls.Load() != int32(tt.wantPage) {
				t.Fatalf("error = %v after %d requests, want %q after %d", err, calls.Load(), tt.wantMsg, tt.wantPage)
			}
		})
	}
}

// TestNameClashRefused: two provider ids that map to one raw file name are
// refused, naming both, and the first file is not written over.
func TestNameClashRefused(t *testing.T) {
	t.Run("reports", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.Handle("POST /v2/oauth/token", &tokenServer{})
		mux.HandleFunc("GET /v1/reports/download/{id}", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("report " + r.PathValue("id") + "\n"))
		})
		c := newTestClient(t, mux)
		ctx, dir := c.withRun(t.Context()), t.TempDir()
		rep := Report{Type: raw.ReportRecon, Format: raw.FormatCSV, Status: raw.StatusReady,
			StartDate: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), EndDate: time.Date(2026, 1, 31, 23, 59, 59, 999e6, time.UTC)}
		a, b := rep, rep
		a.ID, b.ID = "r:1", "r/1" // both r_1
		f, err := c.DownloadReport(ctx, a, dir, raw.SourceRecon)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.DownloadReport(ctx, b, dir, raw.SourceRecon)
		if !errors.Is(err, ErrNameClash) || !strings.Contains(err.Error(), `"r:1"`) || !strings.Contains(err.Error(), `"r/1"`) {
			t.Fatalf("error = %v, want ErrNameClash naming r:1 and r/1", err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, f.Path)); string(got) != "report r:1\n" {
			t.Errorf("%s holds %q", f.Path, got)
		}
	})
	t.Run("liquidations", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.Handle("POST /v2/oauth/token", &tokenServer{})
		mux.HandleFunc("GET /liquidations", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"results": []map[string]string{{"id": "l:1"}, {"id": "l/1"}},
				"last": true, "number": 0, "totalElements": 2})
		})
		mux.HandleFunc("GET /liquidations/{id}", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]string{"id": r.PathValue("id")})
		})
		c := newTestClient(t, mux, func(c *Config) { c.LiquidationURL = c.ReportingURL })
		dir := t.TempDir()
		w := mustWindow(t, "2026-01-01", "2026-01-02")
		o, err := c.extractLiquidations(c.withRun(t.Context()), w, dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.incomplete) != 1 || !strings.Contains(o.incomplete[0], `"l:1"`) || !strings.Contains(o.incomplete[0], `"l/1"`) {
			t.Errorf("incomplete %q, want the clash of l:1 and l/1", o.incomplete)
		}
		if entries, _ := os.ReadDir(filepath.Join(dir, "liquidations")); len(entries) != 0 {
			t.Errorf("liquidation files written: %v", entries)
		}
	})
}

// TestLiquidationsWrittenPerPage: each list page is written as it is when
// it arrives, one raw file per page, so extraction holds a page, not the
// day's liquidations; an item that carries its trade requests gets no file
// of its own, a summary gets its detail file, a repeated id no second one;
// a list that fails afterwards leaves no file behind.
func TestLiquidationsWrittenPerPage(t *testing.T) {
	page0 := `{"results":[{"id":"a","trade_requests":[]},{"id":"s","status":"CREATED"}],"last":false,"number":0,"totalElements":4}`
	page1 := `{"results":[{"id":"b","trade_requests":[]},{"id":"s","trade_requests":[]}],"last":true,"number":1,"totalElements":4}`
	first, second := "liquidations/2026-01-01_2026-01-02_p0000.json", "liquidations/2026-01-01_2026-01-02_p0001.json"
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("second page fails=%v", fail), func(t *testing.T) {
			dir := t.TempDir()
			firstOnDisk := false
			details := map[string]int{}
			mux := http.NewServeMux()
			mux.Handle("POST /v2/oauth/token", &tokenServer{})
			mux.HandleFunc("GET /liquidations", func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("page") != "1" {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, page0)
					return
				}
				_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(first)))
				firstOnDisk = err == nil
				if fail {
					writeJSON(w, 400, map[string]string{"error": "bad request"})
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, page1)
			})
			mux.HandleFunc("GET /liquidations/{id}", func(w http.ResponseWriter, r *http.Request) {
				details[r.PathValue("id")]++
				writeJSON(w, 200, map[string]any{"id": r.PathValue("id"), "status": "CREATED"})
			})
			c := newTestClient(t, mux, func(c *Config) { c.LiquidationURL = c.ReportingURL })
			o, err := c.extractLiquidations(c.withRun(t.Context()), mustWindow(t, "2026-01-01", "2026-01-02"), dir)
			if err != nil {
				t.Fatal(err)
			}
			if !firstOnDisk {
				t.Error("the first list page was not on disk when the second page was asked")
			}
			var onDisk []string
			entries, _ := os.ReadDir(filepath.Join(dir, "liquidations"))
			for _, e := range entries {
				onDisk = append(onDisk, "liquidations/"+e.Name())
			}
			if fail {
				if len(o.incomplete) != 1 || len(onDisk) != 0 {
					t.Errorf("incomplete %q, files %v: want not pulled and no file", o.incomplete, onDisk)
				}
				return
			}
			var paths []string
			for _, f := range o.files {
				paths = append(paths, fmt.Sprintf("%s page=%d %s", f.Path, f.Page, strings.SplitN(f.Request, "?", 2)[0]))
			}
			base := "GET " + c.cfg.LiquidationURL + "/liquidations"
			want := []string{first + " page=0 " + base, second + " page=1 " + base, "liquidations/s.json page=0 " + base + "/s"}
			if len(o.incomplete) != 0 || !slices.Equal(paths, want) || !slices.Equal(onDisk, []string{first, second, "liquidations/s.json"}) {
				t.Errorf("incomplete %q\nfiles %q\non disk %q\nwant the two pages and the summary's detail: %q", o.incomplete, paths, onDisk, want)
			}
			if len(details) != 1 || details["s"] != 1 {
				t.Errorf("detail requests %v, want s alone, once", details)
			}
			for f, body := range map[string]string{first: page0, second: page1} {
				if b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f))); string(b) != body {
					t.Errorf("%s holds %s, want the page as received: %s", f, b, body)
				}
			}
		})
	}
}

package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
)

func TestCreateReport(t *testing.T) {
	var got map[string]string
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("POST /v1/reports", func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		writeJSON(w, 201, reportJSON("r1", StatusPending, ""))
	})
	c := newTestClient(t, mux)
	w, _ := raw.ParseWindow("2026-01-01", "2026-03-31")
	r, err := c.CreateReport(t.Context(), raw.ReportRecon, raw.FormatJSON, w)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"reportName": "recon RECON 2026-01-01..2026-03-31", "reportType": "RECON", "reportFormat": "JSON",
		"startDate": "2026-01-01T00:00:00.000Z", "endDate": "2026-03-31T23:59:59.999Z",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("create body (-want +got):\n%s", diff)
	}
	if r.ID != "r1" || r.Status != StatusPending || !r.StartDate.Equal(w.Start()) {
		t.Errorf("report = %+v", r)
	}
	long, _ := raw.ParseWindow("2026-01-01", "2026-04-01") // 91 days
	if _, err := c.CreateReport(t.Context(), raw.ReportRecon, raw.FormatCSV, long); err == nil {
		t.Error("CreateReport accepted 91 days")
	}
}

func TestWaitReport(t *testing.T) {
	tests := []struct {
		name      string
		statuses  []string // answers of successive polls; the last repeats
		want      string
		wantPolls int32
		wantWaits []time.Duration
		wantErr   bool
	}{
		{"pending then ready", []string{StatusPending, StatusPending, StatusPending, raw.StatusReady}, raw.StatusReady, 4,
			[]time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}, false},
		{"empty", []string{raw.StatusEmpty}, raw.StatusEmpty, 1, []time.Duration{10 * time.Second}, false},
		{"failed", []string{StatusPending, raw.StatusFailed}, raw.StatusFailed, 2, []time.Duration{10 * time.Second, 20 * time.Second}, false},
		{"unknown status", []string{"LOST"}, "", 1, []time.Duration{10 * time.Second}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var polls atomic.Int32
			mux := http.NewServeMux()
			mux.Handle("POST /v2/oauth/token", &tokenServer{})
			mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, reportJSON("r1", tt.statuses[min(int(polls.Add(1)), len(tt.statuses))-1], ""))
			})
			c := newTestClient(t, mux, func(c *Config) { c.PollInterval = 10 * time.Second })
			waits := recordWaits(c)
			r, err := c.WaitReport(t.Context(), "r1")
			if (err != nil) != tt.wantErr || r.Status != tt.want {
				t.Fatalf("WaitReport = %q, %v; want %q, error %v", r.Status, err, tt.want, tt.wantErr)
			}
			if got := polls.Load(); got != tt.wantPolls {
				t.Errorf("polls = %d, want %d", got, tt.wantPolls)
			}
			if diff := cmp.Diff(tt.wantWaits, waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWaitReportTimeout(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, reportJSON("r1", StatusPending, ""))
	})
	c := newTestClient(t, mux, func(c *Config) { c.PollInterval, c.PollTimeout = 2*time.Millisecond, 50*time.Millisecond })
	if _, err := c.WaitReport(t.Context(), "r1"); !errors.Is(err, ErrPollTimeout) {
		t.Fatalf("error = %v, want ErrPollTimeout", err)
	}
}

func TestDownloadReport(t *testing.T) {
	const body = "end_to_end_id,network_payment_id\ne2e-1,p-1\ne2e-2,p-2\n"
	sum := sha256.Sum256([]byte(body))
	ready := raw.File{
		Source: raw.SourceRecon, Format: raw.FormatCSV, Path: "reports/RECON/r1.csv", SHA256: hex.EncodeToString(sum[:]),
		Size: int64(len(body)), Status: raw.StatusReady, ReportID: "r1", Window: mustWindow(t, "2026-01-01", "2026-01-31"),
	}
	empty := ready
	empty.Path, empty.SHA256, empty.Size, empty.Status = "", "", 0, raw.StatusEmpty
	tests := []struct {
		name      string
		answers   []string // "full", "short" (half the declared body) or "204"; the last repeats
		want      raw.File
		wantCalls int32
		wantErr   error
	}{
		{"whole", []string{"full"}, ready, 1, nil},
		{"204 is empty", []string{"204"}, empty, 1, nil},
		{"truncated then whole", []string{"short", "full"}, ready, 2, nil},
		{"always truncated", []string{"short"}, raw.File{}, 5, ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			mux := http.NewServeMux()
			mux.Handle("POST /v2/oauth/token", &tokenServer{})
			mux.HandleFunc("GET /v1/reports/download/{id}", func(w http.ResponseWriter, r *http.Request) {
				switch tt.answers[min(int(calls.Add(1)), len(tt.answers))-1] {
				case "204":
					w.WriteHeader(http.StatusNoContent)
				case "short":
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
					w.Write([]byte(body[:len(body)/2])) // the server then drops the connection
				default:
					w.Write([]byte(body))
				}
			})
			c := newTestClient(t, mux)
			dir := t.TempDir()
			rep := Report{ID: "r1", Type: raw.ReportRecon, Format: "csv", Status: raw.StatusReady,
				StartDate: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), EndDate: time.Date(2026, 1, 31, 23, 59, 59, 999e6, time.UTC)}
			got, err := c.DownloadReport(t.Context(), rep, dir, raw.SourceRecon)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if err == nil {
				tt.want.Request = "GET " + c.cfg.ReportingURL + "/v1/reports/download/r1"
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RawFile (-want +got):\n%s", diff)
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("requests = %d, want %d", got, tt.wantCalls)
			}
			var names []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					names = append(names, filepath.ToSlash(rel))
				}
				return nil
			})
			var wantNames []string
			if tt.want.Path != "" {
				wantNames = []string{tt.want.Path}
				if b, _ := os.ReadFile(filepath.Join(dir, tt.want.Path)); string(b) != body {
					t.Errorf("file holds %q", b)
				}
			}
			if diff := cmp.Diff(wantNames, names); diff != "" {
				t.Errorf("files in dir (-want +got), no temporary files may remain:\n%s", diff)
			}
		})
	}
}

func mustWindow(t *testing.T, from, to string) raw.Window {
	t.Helper()
	w, err := raw.ParseWindow(from, to)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

package extract

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"recon/extract/raw"
)

// reportingService is a fake reporting service that keeps the reports
// created through it; lose says how the answer to the n-th creation
// (1-based) is lost after the report is made: "reset", "502", "504"; or
// before anything is made: "503", "502 before"; or "" (answered).
type reportingService struct {
	mu      sync.Mutex
	reports map[string]map[string]string // id -> record
	posts   int
	deleted []string
	lose    func(n int) string
	gone    bool // downloads answer 410
}

func (s *reportingService) mux(t *testing.T) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("POST /v1/reports", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]string
		json.NewDecoder(r.Body).Decode(&in)
		s.mu.Lock()
		s.posts++
		loss := s.lose(s.posts)
		var rec map[string]string
		if loss != "503" && loss != "502 before" {
			rec = map[string]string{"reportId": fmt.Sprintf("rep-%d", s.posts), "reportName": in["reportName"],
				"reportType": in["reportType"], "reportFormat": in["reportFormat"], "reportStatus": raw.StatusReady,
				"startDate": in["startDate"], "endDate": in["endDate"], "createdOn": time.Now().UTC().Format(TimeFormat)}
			s.reports[rec["reportId"]] = rec
		}
		s.mu.Unlock()
		switch loss {
		case "reset":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close()
		case "502", "502 before", "503", "504":
			w.WriteHeader(map[string]int{"502": 502, "502 before": 502, "503": 503, "504": 504}[loss])
		default:
			writeJSON(w, 201, rec)
		}
	})
	mux.HandleFunc("GET /v1/reports", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		list := []map[string]string{}
		if r.URL.Query().Get("created-by") == CreatedByAPI {
			for _, rec := range s.reports {
				list = append(list, rec)
			}
		}
		writeJSON(w, 200, map[string]any{"reports": list})
	})
	mux.HandleFunc("GET /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		rec, ok := s.reports[r.PathValue("id")]
		s.mu.Unlock()
		if !ok {
			writeJSON(w, 404, map[string]string{"errorCode": "RPT_4"})
			return
		}
		writeJSON(w, 200, rec)
	})
	mux.HandleFunc("GET /v1/reports/download/{id}", func(w http.ResponseWriter, r *http.Request) {
		if s.gone {
			writeJSON(w, 410, map[string]string{"errorCode": "RPT_6"})
			return
		}
		io.WriteString(w, "end_to_end_id,network_payment_id\ne2e-1,p-1\n")
	})
	mux.HandleFunc("DELETE /v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.reports, r.PathValue("id"))
		s.deleted = append(s.deleted, r.PathValue("id"))
		w.WriteHeader(204)
	})
	return mux
}

// TestCreateNotBlindlyRetried: when the answer to a report's creation is
// lost after the service made it (a reset connection, a 502 or 504), the
// client finds that report and uses it: exactly one report exists, and
// cleanup deletes it. A 503 made nothing: the creation is sent again.
func TestCreateNotBlindlyRetried(t *testing.T) {
	for _, loss := range []string{"reset", "502", "504", "503"} {
		for _, cleanup := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s cleanup %v", loss, cleanup), func(t *testing.T) {
				s := &reportingService{reports: map[string]map[string]string{}, lose: func(n int) string {
					if n == 1 {
						return loss
					}
					return ""
				}}
				c := newTestClient(t, s.mux(t), func(c *Config) {
					c.HTTPClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
				})
				yesterday := day(time.Now()).AddDate(0, 0, -1)
				w := raw.Window{From: yesterday, To: yesterday}
				res, err := c.Extract(t.Context(), Request{Reports: w, ReportTypes: []string{raw.ReportRecon}, Cleanup: cleanup}, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				wantPosts, wantID := 1, "rep-1"
				if loss == "503" {
					wantPosts, wantID = 2, "rep-2"
				}
				if len(res.Files) != 1 || res.Files[0].ReportID != wantID || res.Files[0].Status != raw.StatusReady {
					t.Errorf("files %+v, want %s READY", res.Files, wantID)
				}
				s.mu.Lock()
				defer s.mu.Unlock()
				if s.posts != wantPosts {
					t.Errorf("%d creations sent, want %d", s.posts, wantPosts)
				}
				if cleanup {
					if len(s.reports) != 0 || len(s.deleted) != 1 || s.deleted[0] != wantID {
						t.Errorf("after cleanup: reports %v, deleted %v; want %s deleted", s.reports, s.deleted, wantID)
					}
				} else if _, ok := s.reports[wantID]; len(s.reports) != 1 || !ok {
					t.Errorf("reports %v, want %s alone", s.reports, wantID)
				}
			})
		}
	}
}

// TestCreateLookupIgnoresOthers: the lookup after a lost answer takes
// neither a report of another window nor one made long before the run;
// finding none, it creates the report again.
func TestCreateLookupIgnoresOthers(t *testing.T) {
	s := &reportingService{reports: map[string]map[string]string{}}
	yesterday := day(time.Now()).AddDate(0, 0, -1)
	w := raw.Window{From: yesterday, To: yesterday}
	old := map[string]string{"reportId": "old", "reportType": raw.ReportRecon, "reportFormat": raw.FormatCSV, "reportStatus": raw.StatusReady,
		"startDate": w.Start().Format(TimeFormat), "endDate": w.End().Add(-time.Millisecond).Format(TimeFormat),
		"createdOn": time.Now().Add(-time.Hour).UTC().Format(TimeFormat)}
	other := map[string]string{"reportId": "other", "reportType": raw.ReportRecon, "reportFormat": raw.FormatCSV, "reportStatus": raw.StatusReady,
		"startDate": w.Start().AddDate(0, 0, -1).Format(TimeFormat), "endDate": w.End().Add(-time.Millisecond).Format(TimeFormat),
		"createdOn": time.Now().UTC().Format(TimeFormat)}
	s.reports["old"], s.reports["other"] = old, other
	s.lose = func(n int) string {
		if n == 1 {
			return "502 before"
		}
		return ""
	}
	c := newTestClient(t, s.mux(t))
	r, err := c.CreateReport(t.Context(), raw.ReportRecon, raw.FormatCSV, w)
	if err != nil || r.ID != "rep-2" || s.posts != 2 {
		t.Fatalf("CreateReport = %q, %v after %d posts; want rep-2 after 2", r.ID, err, s.posts)
	}
}

// TestCleanupAfterFailedDownload: with cleanup, a report whose download
// fails is deleted too, although the run stops.
func TestCleanupAfterFailedDownload(t *testing.T) {
	s := &reportingService{reports: map[string]map[string]string{}, lose: func(int) string { return "" }, gone: true}
	c := newTestClient(t, s.mux(t))
	yesterday := day(time.Now()).AddDate(0, 0, -1)
	w := raw.Window{From: yesterday, To: yesterday}
	if _, err := c.Extract(t.Context(), Request{Reports: w, ReportTypes: []string{raw.ReportRecon}, Cleanup: true}, t.TempDir()); err == nil {
		t.Fatal("Extract succeeded with a failing download")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reports) != 0 || len(s.deleted) != 1 {
		t.Errorf("reports %v, deleted %v; want rep-1 deleted", s.reports, s.deleted)
	}
}

package extract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
)

// fakeNet is a loopback network: token service, reporting service and server
// API on one host, report files on a second host behind signed links.
// Every report is PENDING at its first poll; then FAILURE_CONVERSION_SSA is
// EMPTY, the RECON report starting 2026-04-01 FAILED, the others READY.
// With faults, services reject the first token (401) and the first download answers 503.
type fakeNet struct {
	t       *testing.T
	tokens  tokenServer
	faults  bool
	entries int // statement entries per account
	files   *httptest.Server

	mu        sync.Mutex
	creates   []string
	reports   map[string]map[string]any // by id, as created
	polls     map[string]int
	downloads atomic.Int32
}

func newFakeNet(t *testing.T, faults bool) (*fakeNet, http.Handler) {
	f := &fakeNet{t: t, faults: faults, entries: 150, reports: map[string]map[string]any{}, polls: map[string]int{}}
	f.files = httptest.NewServer(http.HandlerFunc(f.download))
	t.Cleanup(f.files.Close)
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &f.tokens)
	mux.HandleFunc("POST /v1/reports", f.service(f.create))
	mux.HandleFunc("GET /v1/reports/{id}", f.service(f.get))
	mux.HandleFunc("GET /v4/statement/{account}", f.service(f.statement))
	return f, mux
}

// service checks the bearer token before h.
func (f *fakeNet) service(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok := bearer(r)
		if !strings.HasPrefix(tok, tokenPrefix) || (f.faults && tok == tokenPrefix+"1") {
			writeJSON(w, 401, map[string]string{"error": "invalid_token"})
			return
		}
		h(w, r)
	}
}

func (f *fakeNet) create(w http.ResponseWriter, r *http.Request) {
	var b map[string]string
	json.NewDecoder(r.Body).Decode(&b)
	rep := map[string]any{"reportId": b["reportType"] + "-" + b["startDate"][:10], "reportStatus": StatusPending}
	for _, k := range []string{"reportName", "reportType", "reportFormat", "startDate", "endDate"} {
		rep[k] = b[k]
	}
	f.mu.Lock()
	f.creates = append(f.creates, b["reportType"]+" "+b["startDate"]+" "+b["endDate"])
	f.reports[rep["reportId"].(string)] = rep
	f.mu.Unlock()
	writeJSON(w, 201, rep)
}

func (f *fakeNet) get(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f.mu.Lock()
	rep := maps.Clone(f.reports[id])
	f.polls[id]++
	first := f.polls[id] == 1
	f.mu.Unlock()
	if rep == nil {
		writeJSON(w, 404, map[string]string{"errorCode": "RPT_4", "title": "Report not found"})
		return
	}
	typ, start := rep["reportType"], rep["startDate"].(string)[:10]
	switch {
	case first:
	case typ == raw.ReportFailureConversion:
		rep["reportStatus"] = raw.StatusEmpty
	case typ == raw.ReportRecon && start == "2026-04-01":
		rep["reportStatus"] = raw.StatusFailed
	default:
		rep["reportStatus"], rep["downloadLink"] = raw.StatusReady, f.files.URL+"/dl/"+id+"?sig=SIGNATURE-4711"
	}
	writeJSON(w, 200, rep)
}

func (f *fakeNet) download(w http.ResponseWriter, r *http.Request) {
	if a := r.Header.Get("Authorization"); a != "" {
		f.t.Errorf("download host got Authorization %q", a)
	}
	if f.downloads.Add(1) == 1 && f.faults {
		w.Header().Set("Retry-After", "0")
		writeJSON(w, 503, map[string]string{"title": "busy"})
		return
	}
	fmt.Fprintf(w, "end_to_end_id,network_payment_id\n%s,p-1\n", strings.TrimPrefix(r.URL.Path, "/dl/"))
}

func (f *fakeNet) statement(w http.ResponseWriter, r *http.Request) {
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	size, _ := strconv.Atoi(r.URL.Query().Get("size"))
	ids := make([]string, f.entries)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%03d", r.PathValue("account"), i)
	}
	fmt.Fprint(w, statementBody(ids, page, size, len(ids)))
}

func TestExtract(t *testing.T) {
	f, h := newFakeNet(t, true)
	var logs bytes.Buffer
	c := newTestClient(t, h, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	c.cfg.Now = func() time.Time { return time.Date(2026, 8, 1, 3, 0, 0, 0, time.UTC) }
	dir := t.TempDir()
	req := Request{
		Reports:    mustWindow(t, "2026-01-01", "2026-07-19"), // 200 days: 90 + 90 + 20
		Statements: mustWindow(t, "2026-01-01", "2026-07-25"),
		Accounts:   []string{"ops@rn.us.ny", "fx/ops@rn.gb"},
	}
	res, err := c.Extract(t.Context(), req, dir)
	if err != nil {
		t.Fatal(err)
	}

	var creates []string
	for _, typ := range raw.ReportTypes {
		for _, w := range [][2]string{{"2026-01-01", "2026-03-31"}, {"2026-04-01", "2026-06-29"}, {"2026-06-30", "2026-07-19"}} {
			creates = append(creates, typ+" "+w[0]+"T00:00:00.000Z "+w[1]+"T23:59:59.999Z")
		}
	}
	creates = append(creates, "RECON 2026-04-01T00:00:00.000Z 2026-06-29T23:59:59.999Z") // FAILED: asked for once more
	slices.Sort(creates)
	slices.Sort(f.creates)
	if diff := cmp.Diff(creates, f.creates); diff != "" {
		t.Errorf("reports created (-want +got):\n%s", diff)
	}

	want := []string{
		"failure_conversion 2026-01-01..2026-03-31 EMPTY ",
		"failure_conversion 2026-04-01..2026-06-29 EMPTY ",
		"failure_conversion 2026-06-30..2026-07-19 EMPTY ",
		"payment_ops 2026-01-01..2026-03-31 READY reports/PAYMENT_OPS/PAYMENT_OPS-2026-01-01.csv",
		"payment_ops 2026-04-01..2026-06-29 READY reports/PAYMENT_OPS/PAYMENT_OPS-2026-04-01.csv",
		"payment_ops 2026-06-30..2026-07-19 READY reports/PAYMENT_OPS/PAYMENT_OPS-2026-06-30.csv",
		"recon 2026-01-01..2026-03-31 READY reports/RECON/RECON-2026-01-01.csv",
		"recon 2026-04-01..2026-06-29 FAILED ",
		"recon 2026-06-30..2026-07-19 READY reports/RECON/RECON-2026-06-30.csv",
		"statement 2026-01-01..2026-07-25 READY statements/fx_ops@rn.gb/2026-01-01_2026-07-25_p0000.json",
		"statement 2026-01-01..2026-07-25 READY statements/fx_ops@rn.gb/2026-01-01_2026-07-25_p0001.json",
		"statement 2026-01-01..2026-07-25 READY statements/ops@rn.us.ny/2026-01-01_2026-07-25_p0000.json",
		"statement 2026-01-01..2026-07-25 READY statements/ops@rn.us.ny/2026-01-01_2026-07-25_p0001.json",
	}
	var got []string
	for _, rf := range res.Files {
		got = append(got, fmt.Sprintf("%s %s %s %s", rf.Source, rf.Window, rf.Status, rf.Path))
		if rf.Path == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rf.Path)))
		sum := sha256.Sum256(b)
		if err != nil || hex.EncodeToString(sum[:]) != rf.SHA256 || int64(len(b)) != rf.Size {
			t.Errorf("%s: sha256 or size does not match the file (%v)", rf.Path, err)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	wantIncomplete := []string{"report RECON 2026-04-01..2026-06-29 FAILED 2 times (RECON-2026-04-01, RECON-2026-04-01)"}
	if diff := cmp.Diff(wantIncomplete, res.Incomplete); diff != "" {
		t.Errorf("incomplete (-want +got):\n%s", diff)
	}
	index, err := raw.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.Files, index); diff != "" {
		t.Errorf("index.json (-result +index):\n%s", diff)
	}
	if got := f.tokens.n.Load(); got != 2 {
		t.Errorf("token requests = %d, want 2 (one refresh after the 401s)", got)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	assertNoSecrets(t, "index.json", string(raw))
	assertNoSecrets(t, "log", logs.String())
	if !strings.Contains(logs.String(), "retrying") {
		t.Error("the 503 was not logged as a retry")
	}
}

func TestExtractBadCredentials(t *testing.T) {
	f, h := newFakeNet(t, false)
	var logs bytes.Buffer
	c := newTestClient(t, h, func(c *Config) {
		c.ClientSecret = "not-" + testSecret
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c.Now = func() time.Time { return time.Date(2026, 8, 1, 3, 0, 0, 0, time.UTC) }
	})
	req := Request{Reports: mustWindow(t, "2026-01-01", "2026-07-19"), Statements: mustWindow(t, "2026-01-01", "2026-07-25"), Accounts: []string{"ops@rn"}}
	_, err := c.Extract(t.Context(), req, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "token: access_denied: bad credentials") {
		t.Fatalf("error = %v, want the token endpoint's reason", err)
	}
	if got := f.tokens.n.Load(); got != 1 {
		t.Errorf("token requests = %d, want 1", got)
	}
	assertNoSecrets(t, "error", err.Error())
	assertNoSecrets(t, "log", logs.String())
	assertNoSecrets(t, "config", fmt.Sprintf("%v %+v %#v", c.cfg, c.cfg, c.cfg))
}

func assertNoSecrets(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range []string{testSecret, tokenPrefix, "SIGNATURE"} {
		if strings.Contains(s, secret) {
			t.Errorf("%s holds %q:\n%s", what, secret, s)
		}
	}
}

func TestChunks(t *testing.T) {
	tests := []struct {
		from, to string
		want     []string
	}{
		{"2026-01-01", "2026-01-01", []string{"2026-01-01..2026-01-01"}},
		{"2026-01-01", "2026-03-31", []string{"2026-01-01..2026-03-31"}},
		{"2026-01-01", "2026-04-01", []string{"2026-01-01..2026-03-31", "2026-04-01..2026-04-01"}},
		{"2026-01-01", "2026-07-19", []string{"2026-01-01..2026-03-31", "2026-04-01..2026-06-29", "2026-06-30..2026-07-19"}},
	}
	for _, tt := range tests {
		var got []string
		for _, w := range chunks(mustWindow(t, tt.from, tt.to), MaxReportDays) {
			got = append(got, w.String())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("chunks(%s..%s) (-want +got):\n%s", tt.from, tt.to, diff)
		}
	}
}

func TestRequestValidation(t *testing.T) {
	w := raw.Window{}
	good := Request{Reports: mustWindow(t, "2026-01-01", "2026-01-31"), Statements: mustWindow(t, "2026-01-01", "2026-02-05")}
	tests := []struct {
		name    string
		mod     func(*Request)
		wantErr string
	}{
		{"defaults", func(*Request) {}, ""},
		{"format", func(r *Request) { r.Format = "xml" }, `format "XML"`},
		{"report type", func(r *Request) { r.ReportTypes = []string{"RECON", "LEDGER"} }, `unknown report type "LEDGER"`},
		{"no report window", func(r *Request) { r.Reports = w }, "bad report window"},
		{"no statement window", func(r *Request) { r.Accounts, r.Statements = []string{"a@b"}, w }, "bad statement window"},
		{"account file names clash", func(r *Request) { r.Accounts = []string{"a/b@x", "a_b@x"} }, `account "a_b@x"`},
	}
	for _, tt := range tests {
		r := good
		tt.mod(&r)
		n, err := r.normalise()
		if tt.wantErr == "" {
			if err != nil || n.Format != raw.FormatCSV || len(n.ReportTypes) != 3 {
				t.Errorf("%s: normalise = %+v, %v", tt.name, n, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: error = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

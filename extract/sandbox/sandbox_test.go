package sandbox_test

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
)

var (
	day0 = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	now0 = time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC) // 9 months back: 2026-02-15
)

// clock is a settable Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type env struct {
	s     *sandbox.Sandbox
	srv   *httptest.Server
	clock *clock
}

// start serves a sandbox of 3 days from day0 (unless cfg says otherwise) on
// loopback; its clock starts at now0, or at cfg.Now() when given.
func start(t *testing.T, cfg sandbox.Config) *env {
	t.Helper()
	c := &clock{t: now0}
	if cfg.Now != nil {
		c.t = cfg.Now()
	}
	if cfg.Start.IsZero() {
		cfg.Start = day0
	}
	if cfg.Days == 0 {
		cfg.Days = 3
	}
	if cfg.Seed == 0 {
		cfg.Seed = 7
	}
	cfg.Now = c.Now
	s, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &env{s, srv, c}
}

// call sends a request (body: nil, a string, or a value sent as JSON) and returns the response and its body.
func (e *env) call(t *testing.T, method, path, token string, body any, header ...string) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	if !strings.HasPrefix(path, "http") {
		path = e.srv.URL + path
	}
	req, err := http.NewRequestWithContext(t.Context(), method, path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

var goodToken = map[string]string{"client_id": sandbox.ClientID, "client_secret": sandbox.ClientSecret,
	"audience": sandbox.Audience, "grant_type": "client_credentials"}

func (e *env) token(t *testing.T) string {
	t.Helper()
	resp, b := e.call(t, "POST", extract.PathToken, "", goodToken)
	if resp.StatusCode != 200 {
		t.Fatalf("token: %d %s", resp.StatusCode, b)
	}
	return decode(t, b)["access_token"].(string)
}

func stamp(t time.Time) string { return t.Format(extract.TimeFormat) }

func window(t *testing.T, from, to string) raw.Window {
	t.Helper()
	w, err := raw.ParseWindow(from, to)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func reportRequest(typ, format string, w raw.Window) map[string]string {
	return map[string]string{"reportName": "test", "reportType": typ, "reportFormat": format,
		"startDate": stamp(w.Start()), "endDate": stamp(w.End().Add(-time.Millisecond))}
}

// fetchReport creates a report, polls it until it is no longer PENDING and downloads it.
func (e *env) fetchReport(t *testing.T, tok, typ, format string, w raw.Window) (status int, body []byte) {
	t.Helper()
	resp, b := e.call(t, "POST", extract.PathReports, tok, reportRequest(typ, format, w))
	if resp.StatusCode != 200 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	id := decode(t, b)["reportId"].(string)
	for range 10 {
		_, b = e.call(t, "GET", extract.PathReports+"/"+id, tok, nil)
		rec := decode(t, b)
		if rec["reportStatus"] != extract.StatusPending {
			link, _ := rec["downloadLink"].(string)
			if link == "" {
				link = extract.PathReportDownload + id
			}
			resp, b = e.call(t, "GET", link, tok, nil)
			return resp.StatusCode, b
		}
	}
	t.Fatalf("report %s still PENDING", id)
	return 0, nil
}

func readCSV(t *testing.T, b []byte) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, v := range rec {
			m[recs[0][i]] = v
		}
		out = append(out, m)
	}
	return out
}

func writeReport(t *testing.T, s *sandbox.Sandbox, typ, format string, w raw.Window) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	n, err := s.WriteReport(&buf, typ, format, w)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), n
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]sandbox.Config{
		"no start":           {Days: 1},
		"no days":            {Start: day0},
		"negative rate":      {Start: day0, Days: 1, PaymentsPerDay: -1},
		"unknown route down": {Start: day0, Days: 1, Faults: sandbox.Faults{Down: []string{"GET /liquidations/{payment}"}}},
	} {
		if _, err := sandbox.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}

func TestReportsAreDeterministic(t *testing.T) {
	a, b, other := start(t, sandbox.Config{}), start(t, sandbox.Config{}), start(t, sandbox.Config{Seed: 8})
	tok := a.token(t)
	w := window(t, "2026-10-01", "2026-10-03")
	for _, typ := range raw.ReportTypes {
		for _, format := range []string{raw.FormatCSV, raw.FormatJSON} {
			t.Run(typ+"/"+format, func(t *testing.T) {
				got, n := writeReport(t, a.s, typ, format, w)
				same, _ := writeReport(t, b.s, typ, format, w)
				diff, _ := writeReport(t, other.s, typ, format, w)
				if n == 0 {
					t.Fatal("no rows")
				}
				if !bytes.Equal(got, same) {
					t.Error("same seed gave different bytes")
				}
				if bytes.Equal(got, diff) {
					t.Error("different seed gave the same bytes")
				}
				status, served := a.fetchReport(t, tok, typ, format, w)
				if status != 200 || !bytes.Equal(served, got) {
					t.Errorf("download: status %d, %d bytes; want 200 and the %d bytes of WriteReport", status, len(served), len(got))
				}
			})
		}
	}
}

// TestCSVAndJSONAgree: the JSON download holds the CSV's values, with nulls
// for empty fields, bare numbers and (as the provider does) lower-case currencies.
func TestCSVAndJSONAgree(t *testing.T) {
	e := start(t, sandbox.Config{})
	w := window(t, "2026-10-01", "2026-10-03")
	for _, typ := range raw.ReportTypes {
		c, _ := writeReport(t, e.s, typ, raw.FormatCSV, w)
		j, _ := writeReport(t, e.s, typ, raw.FormatJSON, w)
		var objs []map[string]any
		d := json.NewDecoder(bytes.NewReader(j))
		d.UseNumber()
		if err := d.Decode(&objs); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		var got []map[string]string
		for _, o := range objs {
			m := map[string]string{}
			for k, v := range o {
				switch v := v.(type) {
				case nil:
					m[k] = ""
				case json.Number:
					m[k] = v.String()
				case string:
					if strings.HasSuffix(k, "_currency") {
						v = strings.ToUpper(v)
					}
					m[k] = v
				}
			}
			got = append(got, m)
		}
		if diff := cmp.Diff(readCSV(t, c), got); diff != "" {
			t.Errorf("%s: JSON differs from CSV (-csv +json):\n%s", typ, diff)
		}
	}
}

// TestReportShape checks the columns and the data model: every column is
// used, RECON has 2..5 rows per payment repeating the payment's amounts, and
// some payments execute after midnight. Injected breaks are off: they make
// RECON disagree with PAYMENT_OPS on purpose.
func TestReportShape(t *testing.T) {
	e := start(t, sandbox.Config{PaymentsPerDay: 200, BreaksPerDay: -1})
	w := window(t, "2026-10-01", "2026-10-03")
	notSimulated := map[string]bool{"balance_result": true, "ssa_balance_result": true}
	rows := map[string][]map[string]string{}
	for _, typ := range raw.ReportTypes {
		b, _ := writeReport(t, e.s, typ, raw.FormatCSV, w)
		rows[typ] = readCSV(t, b)
		header, _, _ := bytes.Cut(b, []byte("\n"))
		for _, col := range strings.Split(string(header), ",") {
			if !notSimulated[col] && !slices.ContainsFunc(rows[typ], func(r map[string]string) bool { return r[col] != "" }) {
				t.Errorf("%s: column %s is always empty", typ, col)
			}
		}
	}
	wantOps := "end_to_end_id,network_payment_id,quote_ts,created_at,executed_at,sender_address,sender_customer,sent_amount,sent_currency,withdrawal_result_amount,receiver_address,receiver_customer,received_amount,received_currency,fx_spot_rate,source_exchange,destination_exchange,payment_method,payment_state,remitter_name,remitter_account,beneficiary_name,beneficiary_account,payment_batch_id"
	if b, _ := writeReport(t, e.s, raw.ReportPaymentOps, raw.FormatCSV, w); !bytes.HasPrefix(b, []byte(wantOps+"\n")) {
		t.Errorf("PAYMENT_OPS header is not the spec's field list")
	}
	ops := map[string]map[string]string{}
	crossed := 0
	for _, r := range rows[raw.ReportPaymentOps] {
		ops[r["network_payment_id"]] = r
		if r["executed_at"] != "" && r["executed_at"][:10] != r["quote_ts"][:10] {
			crossed++
		}
	}
	if crossed == 0 {
		t.Error("no payment executes on a later day than its quote")
	}
	perPayment := map[string]int{}
	for _, r := range rows[raw.ReportRecon] {
		id := r["network_payment_id"]
		perPayment[id]++
		if o, ok := ops[id]; ok {
			for _, f := range []string{"sent_amount", "sent_currency", "received_amount", "received_currency", "payment_state", "quote_ts"} {
				if o[f] != r[f] {
					t.Errorf("payment %s: RECON %s %q, PAYMENT_OPS %q", id, f, r[f], o[f])
				}
			}
		}
	}
	for id, n := range perPayment {
		if n < 2 || n > 5 {
			t.Errorf("payment %s has %d RECON rows", id, n)
		}
	}
	for _, r := range rows[raw.ReportFailureConversion] {
		if o, ok := ops[r["network_payment_id"]]; ok && o["payment_state"] != "FAILED" {
			t.Errorf("failure conversion of a %s payment", o["payment_state"])
		}
	}
}

func TestToken(t *testing.T) {
	e := start(t, sandbox.Config{})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(sandbox.ClientID+":"+sandbox.ClientSecret))
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range goodToken {
			m[a] = b
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name    string
		body    any
		header  []string
		status  int
		errCode string
	}{
		{"json body", goodToken, nil, 200, ""},
		{"basic header", map[string]string{"audience": goodToken["audience"], "grant_type": "client_credentials"}, []string{"Authorization", basic}, 200, ""},
		{"form body", url.Values{"client_id": {sandbox.ClientID}, "client_secret": {sandbox.ClientSecret}, "audience": {goodToken["audience"]}, "grant_type": {"client_credentials"}}.Encode(),
			[]string{"Content-Type", "application/x-www-form-urlencoded"}, 200, ""},
		{"wrong secret", with("client_secret", "nope"), nil, 401, "access_denied"},
		{"no credentials", map[string]string{"audience": goodToken["audience"], "grant_type": "client_credentials"}, nil, 401, "access_denied"},
		{"bad grant", with("grant_type", "password"), nil, 400, "unsupported_grant_type"},
		{"bad audience", with("audience", "urn:ripplenet-prod:other"), nil, 400, "invalid_request"},
		{"not json", "{", nil, 400, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := e.call(t, "POST", extract.PathToken, "", tt.body, tt.header...)
			m := decode(t, b)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			if tt.status != 200 {
				if m["error"] != tt.errCode || m["error_description"] == "" {
					t.Errorf("body %s, want error %s with a description", b, tt.errCode)
				}
				return
			}
			if m["token_type"] != "Bearer" || m["expires_in"] != json.Number("3600") || m["access_token"] == "" || m["scope"] == "" {
				t.Errorf("token response %s", b)
			}
		})
	}
	lengths := map[int]bool{}
	for range 8 {
		lengths[len(e.token(t))] = true
	}
	if len(lengths) < 2 {
		t.Error("token length never varies")
	}
}

func TestBearerTokenRequired(t *testing.T) {
	e := start(t, sandbox.Config{})
	stmt := extract.PathStatement[1:] + url.PathEscape(e.s.Accounts()[0]) + "?start-date=" + stamp(day0) + "&end-date=" + stamp(day0.AddDate(0, 0, 1))
	endpoints := []struct{ method, path, codeField string }{
		{"GET", extract.PathReports, "errorCode"},
		{"POST", extract.PathReports, "errorCode"},
		{"GET", extract.PathReports + "/7d0f2b5e-8e36-4c57-9a55-3f4a1c7b2d10", "errorCode"},
		{"GET", extract.PathReportDownload + "7d0f2b5e-8e36-4c57-9a55-3f4a1c7b2d10", "errorCode"},
		{"GET", "/v4/" + stmt, "ripplenet_error_code"},
	}
	tok := e.token(t)
	for _, ep := range endpoints {
		for _, bad := range []string{"", "not-a-token"} {
			resp, b := e.call(t, ep.method, ep.path, bad, nil)
			if resp.StatusCode != 401 || decode(t, b)[ep.codeField] == nil {
				t.Errorf("%s %s with token %q: %d %s, want 401 with %s", ep.method, ep.path, bad, resp.StatusCode, b, ep.codeField)
			}
		}
		if resp, b := e.call(t, ep.method, ep.path, tok, nil); resp.StatusCode == 401 {
			t.Errorf("%s %s with a fresh token: 401 %s", ep.method, ep.path, b)
		}
	}
	e.clock.Add(time.Hour)
	for _, ep := range endpoints {
		if resp, b := e.call(t, ep.method, ep.path, tok, nil); resp.StatusCode != 401 || !strings.Contains(string(b), "expired") {
			t.Errorf("%s %s with an expired token: %d %s", ep.method, ep.path, resp.StatusCode, b)
		}
	}
	if resp, _ := e.call(t, "GET", extract.PathReports, e.token(t), nil); resp.StatusCode != 200 {
		t.Errorf("new token after expiry: %d", resp.StatusCode)
	}
}

func TestReportLifecycle(t *testing.T) {
	e := start(t, sandbox.Config{})
	tok := e.token(t)
	w := window(t, "2026-10-01", "2026-10-02")
	resp, b := e.call(t, "POST", extract.PathReports, tok, reportRequest(raw.ReportRecon, raw.FormatCSV, w))
	rec := decode(t, b)
	if resp.StatusCode != 200 || rec["reportStatus"] != "PENDING" || rec["downloadLink"] != nil || rec["reportCreatedBy"] != "API" {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	id := rec["reportId"].(string)
	for poll := 1; poll <= 3; poll++ {
		_, b = e.call(t, "GET", extract.PathReports+"/"+id, tok, nil)
		rec = decode(t, b)
		want := map[bool]string{true: "PENDING", false: "READY"}[poll <= 2]
		if rec["reportStatus"] != want {
			t.Fatalf("poll %d: %s, want %s", poll, rec["reportStatus"], want)
		}
		if poll <= 2 {
			if resp, b := e.call(t, "GET", extract.PathReportDownload+id, tok, nil); resp.StatusCode != 409 || decode(t, b)["errorCode"] != "RPT_5" {
				t.Errorf("download while pending: %d %s", resp.StatusCode, b)
			}
		}
	}
	if link := rec["downloadLink"]; link != e.srv.URL+extract.PathReportDownload+id {
		t.Errorf("downloadLink %v", link)
	}
	resp, got := e.call(t, "GET", rec["downloadLink"].(string), tok, nil)
	want, _ := writeReport(t, e.s, raw.ReportRecon, raw.FormatCSV, w)
	if resp.StatusCode != 200 || resp.ContentLength != -1 || !bytes.Equal(got, want) {
		t.Errorf("download: %d, Content-Length %d, %d bytes; want %d bytes streamed without a length", resp.StatusCode, resp.ContentLength, len(got), len(want))
	}
	if n := e.s.Requests()["GET /v1/reports/{id}"]; n != 3 {
		t.Errorf("Requests counted %d GETs of the report, want 3", n)
	}
	_, b = e.call(t, "GET", extract.PathReports+"?created-by=API", tok, nil)
	if !strings.Contains(string(b), id) {
		t.Errorf("list created-by=API lacks %s: %s", id, b)
	}
	if resp, _ := e.call(t, "DELETE", extract.PathReports+"/"+id, tok, nil); resp.StatusCode != 204 {
		t.Errorf("delete: %d", resp.StatusCode)
	}
	if resp, b := e.call(t, "GET", extract.PathReports+"/"+id, tok, nil); resp.StatusCode != 404 || decode(t, b)["errorCode"] != "RPT_4" {
		t.Errorf("get after delete: %d %s", resp.StatusCode, b)
	}

	// A window without payments ends EMPTY and downloads as 204.
	status, body := e.fetchReport(t, tok, raw.ReportPaymentOps, raw.FormatJSON, window(t, "2026-09-01", "2026-09-02"))
	if status != 204 || len(body) != 0 {
		t.Errorf("empty report download: %d, %d bytes", status, len(body))
	}
}

func TestScheduledReports(t *testing.T) {
	e := start(t, sandbox.Config{})
	tok := e.token(t)
	_, b := e.call(t, "GET", extract.PathReports+"?created-by=SCHEDULER", tok, nil)
	var list struct{ Reports []map[string]any }
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	// September, October and November to date, every type and format.
	if len(list.Reports) != 18 {
		t.Fatalf("%d scheduled reports, want 18: %s", len(list.Reports), b)
	}
	ready := 0
	for _, r := range list.Reports {
		if r["reportCreatedBy"] != "SCHEDULER" {
			t.Errorf("report %v", r)
		}
		if r["reportStatus"] == "READY" {
			ready++
			if !strings.HasPrefix(r["startDate"].(string), "2026-10-01") {
				t.Errorf("READY report outside the generated days: %v", r)
			}
			resp, _ := e.call(t, "GET", extract.PathReportDownload+r["reportId"].(string), tok, nil)
			if resp.StatusCode != 200 {
				t.Errorf("download scheduled report: %d", resp.StatusCode)
			}
		}
	}
	if ready != 6 {
		t.Errorf("%d READY scheduled reports, want the 6 of October", ready)
	}
	if resp, b := e.call(t, "GET", extract.PathReports+"?created-by=ROBOT", tok, nil); resp.StatusCode != 400 || decode(t, b)["errorCode"] != "RPT_1" {
		t.Errorf("bad created-by: %d %s", resp.StatusCode, b)
	}
}

func TestReportRefusals(t *testing.T) {
	e := start(t, sandbox.Config{})
	tok := e.token(t)
	req := func(from, to string) map[string]string {
		return map[string]string{"reportName": "r", "reportType": "RECON", "reportFormat": "CSV", "startDate": from, "endDate": to}
	}
	with := func(m map[string]string, k, v string) map[string]string { m[k] = v; return m }
	tests := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"90 days", req("2026-08-01T00:00:00.000Z", "2026-10-29T23:59:59.999Z"), 200, ""},
		{"91 days", req("2026-08-01T00:00:00.000Z", "2026-10-30T23:59:59.999Z"), 400, "RPT_2"},
		{"end before start", req("2026-10-02T00:00:00.000Z", "2026-10-01T23:59:59.999Z"), 400, "RPT_2"},
		{"9 months back", req("2026-02-15T00:00:00.000Z", "2026-02-16T23:59:59.999Z"), 200, ""},
		{"over 9 months back", req("2026-02-14T00:00:00.000Z", "2026-02-16T23:59:59.999Z"), 400, "RPT_3"},
		{"bad type", with(req("2026-10-01T00:00:00.000Z", "2026-10-01T23:59:59.999Z"), "reportType", "LEDGER"), 400, "RPT_7"},
		{"bad format", with(req("2026-10-01T00:00:00.000Z", "2026-10-01T23:59:59.999Z"), "reportFormat", "XML"), 400, "RPT_7"},
		{"empty name", with(req("2026-10-01T00:00:00.000Z", "2026-10-01T23:59:59.999Z"), "reportName", ""), 400, "RPT_1"},
		{"long name", with(req("2026-10-01T00:00:00.000Z", "2026-10-01T23:59:59.999Z"), "reportName", strings.Repeat("n", 257)), 400, "RPT_1"},
		{"bad date", req("2026-10-01", "2026-10-02"), 400, "RPT_1"},
		{"not json", "reportName=r", 400, "RPT_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := e.call(t, "POST", extract.PathReports, tok, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			m := decode(t, b)
			if tt.code != "" && (m["errorCode"] != tt.code || m["title"] == nil || m["detail"] == nil || m["time"] == nil || m["type"] == nil) {
				t.Errorf("body %s, want errorCode %s and type, title, detail, time", b, tt.code)
			}
		})
	}
	if resp, b := e.call(t, "GET", extract.PathReports+"/7d0f2b5e-8e36-4c57-9a55-3f4a1c7b2d10", tok, nil); resp.StatusCode != 404 || decode(t, b)["errorCode"] != "RPT_4" {
		t.Errorf("unknown id: %d %s", resp.StatusCode, b)
	}
}

type stmtPage struct {
	AccountName    string          `json:"account_name"`
	OpeningBalance decimal.Decimal `json:"opening_balance"`
	ClosingBalance decimal.Decimal `json:"closing_balance"`
	GeneratedAt    string          `json:"generated_at"`
	Transactions   struct {
		Content []struct {
			TransactionID   string          `json:"transaction_id"`
			TransactionType string          `json:"transaction_type"`
			BalanceChange   decimal.Decimal `json:"balance_change"`
			BalanceResult   decimal.Decimal `json:"balance_result"`
			CreatedAt       string          `json:"created_at"`
		} `json:"content"`
		First, Last   bool
		Number        int `json:"number"`
		TotalPages    int `json:"totalPages"`
		TotalElements int `json:"total_elements"`
	} `json:"transactions"`
}

// statement fetches every page of an account's statement over [from, to).
func (e *env) statement(t *testing.T, tok, acct string, from, to time.Time, size int) []stmtPage {
	t.Helper()
	var pages []stmtPage
	for page := 0; ; page++ {
		path := "/v4" + extract.PathStatement + acct + "?start-date=" + stamp(from) + "&end-date=" + stamp(to) +
			"&page=" + strconv.Itoa(page) + "&size=" + strconv.Itoa(size)
		resp, b := e.call(t, "GET", path, tok, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("statement: %d %s", resp.StatusCode, b)
		}
		var p stmtPage
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		if p.Transactions.Number != page || p.Transactions.First != (page == 0) {
			t.Fatalf("page %d: number %d first %v", page, p.Transactions.Number, p.Transactions.First)
		}
		pages = append(pages, p)
		if p.Transactions.Last {
			return pages
		}
	}
}

func TestStatementPaging(t *testing.T) {
	e := start(t, sandbox.Config{})
	tok := e.token(t)
	from, to := day0, day0.AddDate(0, 0, 4) // the generated days and the day after
	chainBreaks := 0
	for _, acct := range e.s.Accounts() {
		t.Run(acct, func(t *testing.T) {
			pages := e.statement(t, tok, acct, from, to, 7)
			all := e.statement(t, tok, acct, from, to, extract.MaxStatementPage)
			var ids, ids100, jumps []string
			bal := pages[0].OpeningBalance
			prev := ""
			for _, p := range pages {
				if p.AccountName != acct || p.GeneratedAt != stamp(to) || !p.OpeningBalance.Equal(pages[0].OpeningBalance) {
					t.Errorf("page header %+v", p)
				}
				for _, c := range p.Transactions.Content {
					ids = append(ids, c.TransactionID)
					if bal = bal.Add(c.BalanceChange); !bal.Equal(c.BalanceResult) {
						jumps = append(jumps, c.TransactionID) // an injected chain break; the chain goes on from it
						bal = c.BalanceResult
					}
					if key := c.CreatedAt + c.TransactionID; key < prev || c.CreatedAt < stamp(from) || c.CreatedAt >= stamp(to) {
						t.Errorf("entry %s at %s out of order or window", c.TransactionID, c.CreatedAt)
					} else {
						prev = key
					}
				}
			}
			for _, p := range all {
				for _, c := range p.Transactions.Content {
					ids100 = append(ids100, c.TransactionID)
				}
			}
			total := pages[0].Transactions.TotalElements
			if len(ids) != total || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != total || pages[0].Transactions.TotalPages != len(pages) {
				t.Errorf("%d entries over %d pages, want %d distinct over %d", len(ids), len(pages), total, pages[0].Transactions.TotalPages)
			}
			if diff := cmp.Diff(ids100, ids); diff != "" {
				t.Errorf("pages of 7 differ from pages of 100 (-100 +7):\n%s", diff)
			}
			if !bal.Equal(pages[0].ClosingBalance) {
				t.Errorf("closing %s, chain gives %s", pages[0].ClosingBalance, bal)
			}
			var want []string
			for _, b := range e.s.Truth().Breaks {
				if b.RuleID == "statement_balance_chain_break" && b.Account == acct {
					want = append(want, b.PaymentID)
				}
			}
			chainBreaks += len(want)
			if diff := cmp.Diff(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(jumps))); diff != "" {
				t.Errorf("entries breaking the chain differ from the truth's chain breaks (-truth +served):\n%s", diff)
			}
			// Windows join: a window's closing balance opens the next.
			mid := day0.Add(36 * time.Hour)
			a, b := e.statement(t, tok, acct, from, mid, 100)[0], e.statement(t, tok, acct, mid, to, 100)[0]
			if !a.ClosingBalance.Equal(b.OpeningBalance) || !b.ClosingBalance.Equal(pages[0].ClosingBalance) {
				t.Errorf("split windows: %s/%s then %s/%s, whole %s", a.OpeningBalance, a.ClosingBalance, b.OpeningBalance, b.ClosingBalance, pages[0].ClosingBalance)
			}
		})
	}
	if chainBreaks == 0 {
		t.Error("the truth has no chain break to serve")
	}

	acct := e.s.Accounts()[0]
	bad := []struct{ name, path, code string }{
		{"size 0", "?start-date=2026-10-01T00:00:00.000Z&end-date=2026-10-02T00:00:00.000Z&size=0", "E0120"},
		{"size 101", "?start-date=2026-10-01T00:00:00.000Z&end-date=2026-10-02T00:00:00.000Z&size=101", "E0120"},
		{"no dates", "", "E0120"},
		{"short date", "?start-date=2026-10-01&end-date=2026-10-02", "E0120"},
		{"end before start", "?start-date=2026-10-02T00:00:00.000Z&end-date=2026-10-01T00:00:00.000Z", "E0120"},
	}
	for _, tt := range bad {
		resp, b := e.call(t, "GET", "/v4"+extract.PathStatement+acct+tt.path, tok, nil)
		if m := decode(t, b); resp.StatusCode != 400 || m["ripplenet_error_code"] != tt.code || m["status"] != json.Number("400") || m["finality"] == nil {
			t.Errorf("%s: %d %s", tt.name, resp.StatusCode, b)
		}
	}
	if resp, b := e.call(t, "GET", "/v4"+extract.PathStatement+"nobody@rn.xx?start-date=2026-10-01T00:00:00.000Z&end-date=2026-10-02T00:00:00.000Z", tok, nil); resp.StatusCode != 404 {
		t.Errorf("unknown account: %d %s", resp.StatusCode, b)
	}
}

// TestTruthMatchesServedData applies three rules, as the truth defines them,
// to the data served over HTTP: they must find exactly the truth of those
// rules. (pipeline's end-to-end test checks every rule kind.)
func TestTruthMatchesServedData(t *testing.T) {
	e := start(t, sandbox.Config{})
	tok := e.token(t)
	w := window(t, "2026-10-01", "2026-10-03")
	fetch := func(typ string) []map[string]string {
		status, b := e.fetchReport(t, tok, typ, raw.FormatCSV, w)
		if status != 200 {
			t.Fatalf("%s: %d", typ, status)
		}
		return readCSV(t, b)
	}
	ops := fetch(raw.ReportPaymentOps)
	inRecon := map[string]bool{}
	for _, r := range fetch(raw.ReportRecon) {
		inRecon[r["network_payment_id"]] = true
	}
	inStatement := map[string]bool{} // account + " " + transaction_id
	for _, acct := range e.s.Accounts() {
		for _, p := range e.statement(t, tok, acct, w.Start(), w.End().AddDate(0, 0, 1), 100) {
			for _, c := range p.Transactions.Content {
				inStatement[acct+" "+c.TransactionID] = true
			}
		}
	}

	var found []sandbox.TruthBreak
	inOps := map[string]bool{}
	for _, r := range ops {
		id, moved := r["network_payment_id"], r["payment_state"] == "COMPLETED" || r["payment_state"] == "EXECUTED"
		inOps[id] = true
		if moved && !inRecon[id] {
			found = append(found, sandbox.TruthBreak{RuleID: "ops_missing_in_recon", PaymentID: id})
		}
		for _, acct := range []string{r["sender_address"], r["receiver_address"]} {
			if moved && slices.Contains(e.s.Accounts(), acct) && !inStatement[acct+" "+id] {
				found = append(found, sandbox.TruthBreak{RuleID: "payment_missing_in_statement", PaymentID: id, Account: acct})
			}
		}
	}
	for id := range inRecon {
		if !inOps[id] {
			found = append(found, sandbox.TruthBreak{RuleID: "recon_missing_in_ops", PaymentID: id})
		}
	}
	slices.SortFunc(found, func(a, b sandbox.TruthBreak) int {
		return strings.Compare(a.RuleID+a.PaymentID+a.Account, b.RuleID+b.PaymentID+b.Account)
	})
	truth := e.s.Truth()
	var want []sandbox.TruthBreak
	for _, b := range truth.Breaks {
		if b.RuleID == "ops_missing_in_recon" || b.RuleID == "recon_missing_in_ops" || b.RuleID == "payment_missing_in_statement" {
			want = append(want, b)
		}
	}
	if diff := cmp.Diff(want, found); diff != "" {
		t.Errorf("rules on served data differ from the truth (-truth +found):\n%s", diff)
	}

	perRule, seen := map[string]int{}, map[string]bool{}
	for _, b := range truth.Breaks {
		if strings.HasPrefix(b.RuleID, "wallet_") { // TestWalletTruth
			continue
		}
		perRule[b.RuleID]++
		if b.PaymentID == "" { // a transfer's break, not tied to a payment
			continue
		}
		if seen[b.PaymentID] {
			t.Errorf("payment %s carries two injected breaks", b.PaymentID)
		}
		seen[b.PaymentID] = true
	}
	wantPerRule := map[string]int{}
	for _, id := range []string{"ops_missing_in_recon", "recon_missing_in_ops", "ops_recon_amount_mismatch",
		"payment_missing_in_statement", "statement_entry_without_payment", "statement_amount_mismatch",
		"statement_balance_chain_break", "failed_payment_unrecovered", "duplicate_end_to_end_id", "fx_rate_outlier",
		"liquidation_missing", "liquidation_amount_mismatch", "liquidation_not_delivered", "liquidation_stuck",
		"liquidation_trades_mismatch", "payment_state_mismatch", "payment_stale",
		"transfer_missing_in_statement", "statement_transfer_without_transfer", "return_unreconciled",
		"fee_mismatch"} {
		wantPerRule[id] = 6
	}
	wantPerRule["failed_payment_unrecovered"] += 6      // and FAILED payments whose funds moved
	wantPerRule["statement_entry_without_payment"] += 2 // the entries of returns unknown to the server API (one in three)
	wantPerRule["balance_snapshot_mismatch"] = 2        // one snapshot: two drifted accounts
	wantPerRule["payment_stale"] += 4                   // and the labelled payments before the window (history.go)
	if !cmp.Equal(perRule, wantPerRule) {
		t.Errorf("breaks per rule %v, want %v (3 days × 2)", perRule, wantPerRule)
	}
	decoys := slices.DeleteFunc(slices.Clone(truth.Decoys), func(b sandbox.TruthBreak) bool { return strings.HasPrefix(b.RuleID, "wallet_") })
	// 10 kinds of 6, 4 returns booked the next day (none on the last day), and 2 labelled before the window
	if len(truth.Pending) != 0 || len(decoys) != 66 || !truth.AsOf.Equal(now0) {
		t.Errorf("truth as of %s: %d pending, %d decoys; want as of %s, none pending (all grace periods over), 66 decoys",
			truth.AsOf, len(truth.Pending), len(decoys), now0)
	}
	var buf bytes.Buffer
	if err := truth.WriteJSON(&buf); err != nil || !json.Valid(buf.Bytes()) {
		t.Errorf("WriteJSON: %v", err)
	}
	if none := start(t, sandbox.Config{BreaksPerDay: -1}).s.Truth(); len(none.Breaks)+len(none.Pending)+len(none.Decoys) != 0 {
		t.Errorf("BreaksPerDay -1 injected %+v", none)
	}
}

// TestGraceEdges checks the items placed around the truth's as-of time: each
// rule with a grace period has a break due shortly before it and a pending
// item due shortly after it, and every item sits on the side the truth says.
func TestGraceEdges(t *testing.T) {
	asOf := day0.Add(54 * time.Hour) // grace periods of 24 h end inside the generated days
	e := start(t, sandbox.Config{Now: func() time.Time { return asOf }, PaymentsPerDay: 1000})
	tok := e.token(t)
	w := window(t, "2026-10-01", "2026-10-03")
	settled := map[string]time.Time{} // payment id -> executed_at, or execution_timestamp of a failure
	parse := func(v string) time.Time {
		at, err := time.Parse(extract.TimeFormat, v)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	for typ, col := range map[string]string{raw.ReportPaymentOps: "executed_at", raw.ReportFailureConversion: "execution_timestamp"} {
		status, b := e.fetchReport(t, tok, typ, raw.FormatCSV, w)
		if status != 200 {
			t.Fatalf("%s: %d", typ, status)
		}
		for _, r := range readCSV(t, b) {
			if r[col] != "" {
				settled[r["network_payment_id"]] = parse(r[col])
			}
		}
	}
	for _, acct := range e.s.Accounts() { // entries whose payment left the reports
		for _, p := range e.statement(t, tok, acct, w.Start(), w.End().AddDate(0, 0, 1), 100) {
			for _, c := range p.Transactions.Content {
				settled[c.TransactionID] = parse(c.CreatedAt)
			}
		}
	}
	// The waits of the liquidation and server API rules start elsewhere: a
	// liquidation's creation; a stale payment's contract expiry, or its
	// execution when its payout failed recoverably.
	started := map[string]map[string]time.Time{"liquidation_stuck": {}, "payment_stale": {}}
	for _, l := range e.list(t, tok, "/liquidations?start_date="+stamp(w.Start())+"&end_date="+stamp(w.End()), "results", 200) {
		started["liquidation_stuck"][l["network_payment_id"].(string)] = parse(l["created_at"].(string))
	}
	for _, p := range e.list(t, tok, "/v4/payments?range_field=MODIFIED_AT&after="+stamp(w.Start().Add(-time.Millisecond))+"&before="+stamp(w.End().AddDate(0, 0, 1)), "content", 100) {
		switch p["payment_state"] {
		case "EXECUTED":
			started["payment_stale"][p["payment_id"].(string)] = parse(p["executed_at"].(string))
		case "FAILED": // funds that moved before the failure (failed_payment_unrecovered)
			if at, _ := p["executed_at"].(string); at != "" {
				settled[p["payment_id"].(string)] = parse(at)
			} else if xs, _ := p["execution_results"].([]any); len(xs) > 0 {
				settled[p["payment_id"].(string)] = parse(xs[0].(map[string]any)["execution_timestamp"].(string))
			}
		case "COMPLETED":
		default:
			started["payment_stale"][p["payment_id"].(string)] = parse(p["contract"].(map[string]any)["expires_at"].(string))
		}
	}
	truth := e.s.Truth()
	graceRules := []string{"payment_missing_in_statement", "statement_entry_without_payment", "failed_payment_unrecovered",
		"liquidation_missing", "liquidation_stuck", "payment_stale"}
	justPast, justInside := map[string]bool{}, map[string]bool{}
	for _, l := range []struct {
		items   []sandbox.TruthBreak
		pending bool
	}{{truth.Breaks, false}, {truth.Pending, true}} {
		for _, b := range l.items {
			if !slices.Contains(graceRules, b.RuleID) {
				continue
			}
			at, ok := settled[b.PaymentID]
			if m := started[b.RuleID]; m != nil {
				at, ok = m[b.PaymentID]
			}
			if b.RuleID == "payment_stale" && !l.pending && !ok {
				continue // an irrecoverable payout is a break at once: no wait
			}
			if !ok {
				t.Fatalf("%s %s: no settlement time served", b.RuleID, b.PaymentID)
			}
			due := at.Add(24 * time.Hour)
			if due.After(asOf) != l.pending {
				t.Errorf("%s %s due %s: pending=%v at %s", b.RuleID, b.PaymentID, stamp(due), l.pending, stamp(asOf))
			}
			if d := due.Sub(asOf); d > 0 && d <= time.Hour {
				justInside[b.RuleID] = true
			} else if d <= 0 && d > -time.Hour {
				justPast[b.RuleID] = true
			}
		}
	}
	for _, r := range graceRules {
		if !justPast[r] || !justInside[r] {
			t.Errorf("%s: item due within an hour before %s: %v, after: %v", r, stamp(asOf), justPast[r], justInside[r])
		}
	}
}

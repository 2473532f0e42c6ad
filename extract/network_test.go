package extract_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/extract/sandbox/sandboxtest"
)

// These tests run the real client against the sandbox over loopback.

var (
	day0 = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	now0 = time.Date(2026, 10, 6, 6, 0, 0, 0, time.UTC) // after the generated days
)

// network is a sandbox on loopback (and its download host) and a client of it.
type network struct {
	sb     *sandbox.Sandbox
	client *extract.Client
}

// sandboxURL stands for the sandbox's address in the client's configuration
// until the sandbox listens (a mod may clear a URL).
const sandboxURL = "http://sandbox.invalid"

// newNetwork serves a sandbox of 3 days from day0, seed 7, with faults, and
// returns a client with zero backoff waits.
func newNetwork(t *testing.T, faults sandbox.Faults, mods ...func(*sandbox.Config, *extract.Config)) *network {
	t.Helper()
	scfg := sandbox.Config{Seed: 7, Start: day0, Days: 3, Now: func() time.Time { return now0 }, Faults: faults}
	ecfg := extract.Config{
		AuthURL: sandboxURL, ReportingURL: sandboxURL, ServerURL: sandboxURL + "/v4", LiquidationURL: sandboxURL,
		ClientID: sandbox.ClientID, ClientSecret: sandbox.ClientSecret, Audience: sandbox.Audience,
		Retry: extract.RetryPolicy{MaxAttempts: 6}, PollInterval: time.Millisecond, Now: func() time.Time { return now0 },
	}
	for _, m := range mods {
		m(&scfg, &ecfg)
	}
	srv := sandboxtest.Serve(t, scfg)
	for _, u := range []*string{&ecfg.AuthURL, &ecfg.ReportingURL, &ecfg.ServerURL, &ecfg.LiquidationURL} {
		*u = strings.Replace(*u, sandboxURL, srv.URL, 1)
	}
	c, err := extract.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	return &network{sb: srv.Sandbox, client: c}
}

func window(t *testing.T, from, to string) raw.Window {
	t.Helper()
	w, err := raw.ParseWindow(from, to)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// fullRequest pulls every source over the sandbox's days.
func fullRequest(t *testing.T, sb *sandbox.Sandbox, format string) extract.Request {
	w, sw := window(t, "2026-10-01", "2026-10-03"), window(t, "2026-10-01", "2026-10-04")
	return extract.Request{Reports: w, Statements: sw, Accounts: sb.Accounts(), Format: format, Liquidations: sw, Server: sw}
}

// outcome is what one extraction gave.
type outcome struct {
	res      *extract.Result
	err      error
	data     map[string]tally // by source, parsed from the raw files
	requests map[string]int   // served by the sandbox, per pattern
	injected map[string]int
	sb       *sandbox.Sandbox
}

func (o outcome) total() int {
	n := 0
	for _, c := range o.requests {
		n += c
	}
	return n
}

func (n *network) extract(t *testing.T, req extract.Request) outcome {
	t.Helper()
	dir := t.TempDir()
	res, err := n.client.Extract(t.Context(), req, dir)
	o := outcome{res: res, err: err, requests: n.sb.Requests(), injected: n.sb.Injected(), sb: n.sb}
	if err == nil {
		o.data = tallyRaw(t, dir, res.Files)
	}
	return o
}

// tally is what the raw files of one source hold: well-formed rows (or
// records), the sum of their amounts, and malformed report rows.
type tally struct {
	Rows      int
	Sum       string
	Malformed int
}

// tallyRaw parses every raw file (and checks its size and sha256 against the index).
func tallyRaw(t *testing.T, dir string, files []raw.File) map[string]tally {
	t.Helper()
	sums := map[string]decimal.Decimal{}
	out := map[string]tally{}
	seenLiquidation := map[string]bool{}
	add := func(source string, amount string) {
		d, err := decimal.NewFromString(amount)
		if err != nil {
			t.Fatalf("%s: amount %q: %v", source, amount, err)
		}
		sums[source] = sums[source].Add(d)
		tl := out[source]
		tl.Rows++
		out[source] = tl
	}
	for _, f := range files {
		if f.Path == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != f.SHA256 || int64(len(b)) != f.Size {
			t.Errorf("%s: sha256 %s size %d, index says %s %d", f.Path, got, len(b), f.SHA256, f.Size)
		}
		switch f.Source {
		case raw.SourcePaymentOps, raw.SourceRecon, raw.SourceFailureConversion:
			for _, r := range reportRows(t, f, b) {
				if r == nil {
					tl := out[f.Source]
					tl.Malformed++
					out[f.Source] = tl
					continue
				}
				add(f.Source, r["sent_amount"])
			}
		case raw.SourceStatement:
			var p struct {
				Transactions struct {
					Content []struct {
						BalanceChange json.Number `json:"balance_change"`
					} `json:"content"`
				} `json:"transactions"`
			}
			mustDecode(t, b, &p)
			for _, e := range p.Transactions.Content {
				add(f.Source, e.BalanceChange.String())
			}
		case raw.SourceLiquidation:
			for _, item := range liquidationRecords(t, b, seenLiquidation) {
				var l struct {
					DestinationAmount json.Number `json:"destination_amount"`
					TradeRequests     []struct {
						Amount          json.Number `json:"amount"`
						TradeExecutions []struct {
							DestinationAmount json.Number `json:"destination_amount"`
						} `json:"trade_executions"`
					} `json:"trade_requests"`
				}
				mustDecode(t, item, &l)
				add(f.Source, l.DestinationAmount.String())
				for _, tr := range l.TradeRequests {
					add("liquidation_trade", tr.Amount.String())
					for _, e := range tr.TradeExecutions {
						add("trade_execution", e.DestinationAmount.String())
					}
				}
			}
		case raw.SourcePayment, raw.SourcePaymentLabel, raw.SourceTransfer, raw.SourceFee:
			var p struct {
				Content []struct {
					Contract struct {
						Quote struct {
							Amount string `json:"amount"`
						} `json:"quote"`
					} `json:"contract"`
					Amount string      `json:"amount"`
					Value  json.Number `json:"value"`
				} `json:"content"`
			}
			mustDecode(t, b, &p)
			for _, item := range p.Content {
				add(f.Source, item.Contract.Quote.Amount+item.Amount+item.Value.String())
			}
		case raw.SourceBalance:
			var p struct {
				LocalBalance struct {
					CurrencyBalances []struct {
						AccountBalances []struct {
							Balance json.Number `json:"balance"`
						} `json:"account_balances"`
					} `json:"currency_balances"`
				} `json:"local_balance"`
			}
			mustDecode(t, b, &p)
			for _, cb := range p.LocalBalance.CurrencyBalances {
				for _, ab := range cb.AccountBalances {
					add(f.Source, ab.Balance.String())
				}
			}
		default:
			t.Errorf("%s: unknown source %q", f.Path, f.Source)
		}
	}
	for s, d := range sums {
		tl := out[s]
		tl.Sum = d.String()
		out[s] = tl
	}
	return out
}

func mustDecode(t *testing.T, b []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		t.Fatalf("decode %.80s: %v", b, err)
	}
}

// reportRows returns the rows of a report as text by column; nil for a
// malformed row (short, without payment id, bad amount or bad timestamp).
func reportRows(t *testing.T, f raw.File, b []byte) []map[string]string {
	t.Helper()
	var rows []map[string]string
	switch f.Format {
	case raw.FormatCSV:
		r := csv.NewReader(bytes.NewReader(b))
		r.FieldsPerRecord = -1
		all, err := r.ReadAll()
		if err != nil || len(all) == 0 {
			t.Fatalf("%s: %v", f.Path, err)
		}
		for _, rec := range all[1:] {
			if len(rec) != len(all[0]) {
				rows = append(rows, nil)
				continue
			}
			m := map[string]string{}
			for i, h := range all[0] {
				m[h] = rec[i]
			}
			rows = append(rows, m)
		}
	case raw.FormatJSON:
		var objs []map[string]any
		mustDecode(t, b, &objs)
		for _, o := range objs {
			m := map[string]string{}
			for k, v := range o {
				switch v := v.(type) {
				case json.Number:
					m[k] = v.String()
				case string:
					m[k] = v
					if strings.HasSuffix(k, "_amount") {
						m[k] = "text:" + v // amounts are JSON numbers; text is malformed
					}
				}
			}
			rows = append(rows, m)
		}
	}
	for i, m := range rows {
		if m == nil {
			continue
		}
		_, amountErr := decimal.NewFromString(m["sent_amount"])
		bad := m["network_payment_id"] == "" || amountErr != nil
		for _, c := range []string{"quote_ts", "execution_timestamp"} {
			if v := m[c]; v != "" {
				if _, err := time.Parse(extract.TimeFormat, v); err != nil {
					bad = true
				}
			}
		}
		if bad {
			rows[i] = nil
		}
	}
	return rows
}

// networkFaults sums the faults that each cost exactly one more request.
func networkFaults(inj map[string]int) int {
	return inj["rate_limit"] + inj["server_error"] + inj["truncated_download"] + inj["token_expired"]
}

// TestFaults runs one extraction per fault knob and compares it with a
// fault-free run of the same seed: the outcome, and the requests it cost.
func TestFaults(t *testing.T) {
	base := newNetwork(t, sandbox.Faults{})
	want := base.extract(t, fullRequest(t, base.sb, raw.FormatCSV))
	if want.err != nil || len(want.res.Incomplete) != 0 {
		t.Fatalf("fault-free run: %v %v", want.err, want.res.Incomplete)
	}
	for _, s := range []string{"payment_ops", "recon", "failure_conversion", "statement", "liquidation", "liquidation_trade",
		"trade_execution", "payment", "transfer", "balance", "fee"} {
		if want.data[s].Rows == 0 {
			t.Fatalf("the fault-free run has no %s: %v", s, want.data)
		}
	}
	reports := want.requests["POST /v1/reports"]
	downloads := want.requests["GET /v1/reports/download/{id}"]

	tests := []struct {
		name   string
		faults sandbox.Faults
		mod    func(*sandbox.Config, *extract.Config)
		kind   string                          // the Injected count that must not be 0
		check  func(t *testing.T, got outcome) // beyond the checks every case gets
		same   bool                            // the raw data equals the fault-free run's
	}{
		{name: "429 with Retry-After", kind: "rate_limit", faults: sandbox.Faults{RateLimit: 0.3}, same: true,
			check: func(t *testing.T, got outcome) { wantExtra(t, got, want, got.injected["rate_limit"]) }},
		{name: "502, 503 and 504", kind: "server_error", faults: sandbox.Faults{ServerErrors: 0.3}, same: true,
			check: func(t *testing.T, got outcome) {
				wantExtra(t, got, want, got.injected["server_error"]+createLookups(t, got, want))
			}},
		{name: "latency", faults: sandbox.Faults{Latency: sandbox.Duration(2 * time.Millisecond)}, same: true,
			check: func(t *testing.T, got outcome) { wantExtra(t, got, want, 0) }},
		{name: "token expires mid-run", kind: "token_expired", faults: sandbox.Faults{TokenUses: 20}, same: true,
			check: func(t *testing.T, got outcome) {
				expired, tokens := got.injected["token_expired"], got.requests["POST /v2/oauth/token"]
				if tokens < 2 || tokens-1 > expired {
					t.Errorf("%d token requests for %d expiries: want a fresh token per expiry at most", tokens, expired)
				}
				wantExtra(t, got, want, expired+tokens-1)
			}},
		{name: "reports PENDING for 5 polls", mod: func(s *sandbox.Config, _ *extract.Config) { s.PendingPolls = 5 }, same: true,
			check: func(t *testing.T, got outcome) {
				if polls := got.requests["GET /v1/reports/{id}"]; polls != reports*6 {
					t.Errorf("%d polls, want 6 for each of %d reports", polls, reports)
				}
				wantExtra(t, got, want, reports*3)
			}},
		{name: "a FAILED report is asked for again", kind: "failed_report", faults: sandbox.Faults{FailedReports: 0.4},
			mod: func(_ *sandbox.Config, e *extract.Config) { e.ReportTries = 4 }, same: true,
			check: func(t *testing.T, got outcome) {
				failed := got.injected["failed_report"]
				if n := got.requests["POST /v1/reports"]; n != reports+failed {
					t.Errorf("%d reports created, want %d + %d FAILED", n, reports, failed)
				}
				wantExtra(t, got, want, failed*4) // create + 3 polls each
			}},
		{name: "every report FAILED: run incomplete", kind: "failed_report", faults: sandbox.Faults{FailedReports: 1},
			check: func(t *testing.T, got outcome) {
				if n := got.requests["POST /v1/reports"]; n != 2*reports {
					t.Errorf("%d reports created, want 2 tries for each of %d chunks", n, reports)
				}
				if n := got.requests["GET /v1/reports/download/{id}"]; n != 0 {
					t.Errorf("%d downloads of FAILED reports", n)
				}
				if len(got.res.Incomplete) != reports {
					t.Errorf("incomplete: %q, want one reason per chunk", got.res.Incomplete)
				}
				for _, r := range got.res.Incomplete {
					if !strings.Contains(r, "FAILED 2 times") {
						t.Errorf("reason %q", r)
					}
				}
				if got.data["payment_ops"].Rows != 0 || got.data["statement"] != want.data["statement"] {
					t.Errorf("want no report rows and every statement: %v", got.data)
				}
			}},
		{name: "every report EMPTY: recorded, not an error", kind: "empty_report", faults: sandbox.Faults{EmptyReports: 1},
			check: func(t *testing.T, got outcome) {
				if n := got.requests["GET /v1/reports/download/{id}"]; n != 0 {
					t.Errorf("%d downloads of EMPTY reports", n)
				}
				for _, f := range got.res.Files {
					if f.ReportID != "" && (f.Status != raw.StatusEmpty || f.Path != "") {
						t.Errorf("report file %+v, want EMPTY without a file", f)
					}
				}
				if len(got.res.Incomplete) != 0 || got.injected["empty_report"] != reports {
					t.Errorf("incomplete %q, %d EMPTY injected", got.res.Incomplete, got.injected["empty_report"])
				}
			}},
		{name: "truncated downloads are retried", kind: "truncated_download", faults: sandbox.Faults{Truncate: 0.5}, same: true,
			check: func(t *testing.T, got outcome) {
				if n := got.requests["GET /v1/reports/download/{id}"]; n != downloads+got.injected["truncated_download"] {
					t.Errorf("%d downloads, want %d + %d truncated", n, downloads, got.injected["truncated_download"])
				}
				wantExtra(t, got, want, got.injected["truncated_download"])
			}},
		{name: "download links on another host", faults: sandbox.Faults{DownloadHost: true}, same: true,
			check: func(t *testing.T, got outcome) {
				if got.requests["GET /files/{name}"] != downloads || got.requests["GET /v1/reports/download/{id}"] != 0 {
					t.Errorf("downloads: %v, want all %d on the download host", got.requests, downloads)
				}
				wantExtra(t, got, want, 0)
			}},
		{name: "liquidation service down: not pulled, run incomplete", kind: "down",
			faults: sandbox.Faults{Down: []string{"GET /liquidations/{id}"}, LiquidationSummaries: true},
			check:  func(t *testing.T, got outcome) { wantNotPulled(t, got, want, raw.SourceLiquidation) }},
		{name: "payments down: neither list pulled, run incomplete", kind: "down",
			faults: sandbox.Faults{Down: []string{"GET /v4/payments"}},
			check:  func(t *testing.T, got outcome) { wantNotPulled(t, got, want, raw.SourcePayment) }},
		{name: "no liquidation service configured: not pulled, run incomplete",
			mod: func(_ *sandbox.Config, e *extract.Config) { e.LiquidationURL = "" },
			check: func(t *testing.T, got outcome) {
				wantNotPulled(t, got, want, raw.SourceLiquidation)
				if n := got.requests["GET /liquidations"]; n != 0 {
					t.Errorf("%d liquidation requests without a liquidation service", n)
				}
			}},
		{name: "malformed rows kept for quarantine", kind: "malformed_row", faults: sandbox.Faults{MalformedRows: 0.05},
			check: func(t *testing.T, got outcome) {
				n := 0
				for s, tl := range got.data {
					n += tl.Malformed
					w := want.data[s]
					if tl.Rows != w.Rows || tl.Sum != w.Sum {
						t.Errorf("%s: well-formed rows %d sum %s, want %d %s", s, tl.Rows, tl.Sum, w.Rows, w.Sum)
					}
				}
				if n == 0 || n != got.injected["malformed_row"] {
					t.Errorf("%d malformed rows in the raw files, sandbox injected %d", n, got.injected["malformed_row"])
				}
				wantExtra(t, got, want, 0)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newNetwork(t, tt.faults, func(s *sandbox.Config, e *extract.Config) {
				if tt.mod != nil {
					tt.mod(s, e)
				}
			})
			got := n.extract(t, fullRequest(t, n.sb, raw.FormatCSV))
			if got.err != nil {
				t.Fatalf("extract: %v", got.err)
			}
			if tt.kind != "" && got.injected[tt.kind] == 0 {
				t.Fatalf("no %s was injected: %v", tt.kind, got.injected)
			}
			if tt.same {
				if len(got.res.Incomplete) != 0 {
					t.Errorf("incomplete: %q", got.res.Incomplete)
				}
				if diff := cmp.Diff(want.data, got.data); diff != "" {
					t.Errorf("raw data differs from the fault-free run (-want +got):\n%s", diff)
				}
			}
			if a := n.sb.FilesAuthorization(); len(a) != 0 {
				t.Errorf("the download host received Authorization headers: %d", len(a))
			}
			tt.check(t, got)
		})
	}
}

// wantNotPulled checks that source alone was not pulled: FAILED RawFiles
// without a file (one per list of the source), one reason each, no raw data
// of it, every other source as fault-free.
func wantNotPulled(t *testing.T, got, want outcome, source string) {
	t.Helper()
	var failed []raw.File
	for _, f := range got.res.Files {
		if f.Status == raw.StatusFailed {
			failed = append(failed, f)
		}
	}
	// GET /v4/payments down takes the label sweep too: one FAILED file per swept label.
	lists := map[string]int{raw.SourceLiquidation: 1, raw.SourcePayment: len(extract.PaymentQueries(window(t, "2026-10-01", "2026-10-04"), now0)) + len(extract.SweptLabels)}[source]
	if len(failed) != lists || len(got.res.Incomplete) != lists {
		t.Errorf("FAILED files %+v, incomplete %q: want %d for %s", failed, got.res.Incomplete, lists, source)
	}
	also := map[string]string{raw.SourcePayment: raw.SourcePaymentLabel}[source]
	for i, f := range failed {
		src := f.Source
		if src == also && src != "" {
			src = source
		}
		if src != source || f.Path != "" || f.Window != window(t, "2026-10-01", "2026-10-04") ||
			i < len(got.res.Incomplete) && !strings.Contains(got.res.Incomplete[i], f.Source+" 2026-10-01..2026-10-04 not pulled") {
			t.Errorf("FAILED file %+v, reasons %q", f, got.res.Incomplete)
		}
	}
	for s, tl := range want.data {
		gone := s == source || s == also && also != "" || source == raw.SourceLiquidation && (s == "liquidation_trade" || s == "trade_execution")
		if g := got.data[s]; gone && g != (tally{}) || !gone && g != tl {
			t.Errorf("%s: %+v, want %+v", s, g, map[bool]any{true: "nothing", false: tl}[gone])
		}
	}
}

// createLookups is the number of report lists got made to look for a
// report a failed create may have made (after a 502 or 504 CreateReport
// looks before it posts again): at most one per fault on the creation.
func createLookups(t *testing.T, got, want outcome) int {
	t.Helper()
	const list, create = "GET /v1/reports", "POST /v1/reports"
	n := got.requests[list] - want.requests[list] - got.sb.InjectedOn(list)
	if n < 0 || n > got.sb.InjectedOn(create) {
		t.Errorf("%d report lists after %d faults on %s", n, got.sb.InjectedOn(create), create)
	}
	return n
}

// wantExtra checks that got made exactly extra requests more than want.
func wantExtra(t *testing.T, got, want outcome, extra int) {
	t.Helper()
	if got.total() != want.total()+extra {
		t.Errorf("%d requests, want %d + %d for the faults (injected %v)\ngot  %v\nwant %v",
			got.total(), want.total(), extra, got.injected, got.requests, want.requests)
	}
}

// TestAllFaultsGiveTheSameData turns every fault on at once, in both
// formats: the raw data equals a fault-free run's, and every fault costs
// exactly the requests it should.
func TestAllFaultsGiveTheSameData(t *testing.T) {
	for _, format := range []string{raw.FormatCSV, raw.FormatJSON} {
		t.Run(format, func(t *testing.T) {
			// Liquidation summaries: one detail request each, enough requests for every fault to show.
			base := newNetwork(t, sandbox.Faults{LiquidationSummaries: true})
			want := base.extract(t, fullRequest(t, base.sb, format))
			faults := sandbox.ModerateFaults()
			faults.LiquidationSummaries = true
			faults.Latency = sandbox.Duration(time.Millisecond)
			faults.FailedReports = 0.5 // 3 reports per run: make a FAILED one likely
			n := newNetwork(t, faults, func(_ *sandbox.Config, e *extract.Config) { e.ReportTries = 4 })
			got := n.extract(t, fullRequest(t, n.sb, format))
			if want.err != nil || got.err != nil {
				t.Fatalf("extract: %v / %v", want.err, got.err)
			}
			if len(got.res.Incomplete) != 0 {
				t.Errorf("incomplete: %q", got.res.Incomplete)
			}
			malformed := 0
			for s, tl := range got.data {
				malformed += tl.Malformed
				tl.Malformed = 0
				got.data[s] = tl
			}
			if diff := cmp.Diff(want.data, got.data); diff != "" {
				t.Errorf("raw data differs from the fault-free run (-want +got):\n%s", diff)
			}
			inj := got.injected
			for _, k := range []string{"rate_limit", "server_error", "token_expired", "failed_report", "malformed_row"} {
				if inj[k] == 0 {
					t.Errorf("no %s injected: %v", k, inj)
				}
			}
			if malformed != inj["malformed_row"] {
				t.Errorf("%d malformed rows in the raw files, sandbox injected %d", malformed, inj["malformed_row"])
			}
			// Each network fault costs one request, a new token one, and a
			// FAILED report its creation and three polls.
			refreshes := got.requests["POST /v2/oauth/token"] - want.requests["POST /v2/oauth/token"] - n.sb.InjectedOn("POST /v2/oauth/token")
			wantExtra(t, got, want, networkFaults(inj)+inj["failed_report"]*4+refreshes+createLookups(t, got, want))
			if a := n.sb.FilesAuthorization(); len(a) != 0 || got.requests["GET /files/{name}"] == 0 {
				t.Errorf("download host: %d Authorization headers, %d requests", len(a), got.requests["GET /files/{name}"])
			}
			t.Logf("%s: %d requests fault-free, %d with faults %v", format, want.total(), got.total(), inj)
		})
	}
}

// TestBearerTokenNeverReachesTheDownloadHost downloads every report from
// signed links on a second listener.
func TestBearerTokenNeverReachesTheDownloadHost(t *testing.T) {
	n := newNetwork(t, sandbox.Faults{DownloadHost: true, Truncate: 0.3})
	got := n.extract(t, fullRequest(t, n.sb, raw.FormatJSON))
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.requests["GET /files/{name}"] == 0 {
		t.Fatal("nothing was downloaded from the download host")
	}
	if a := n.sb.FilesAuthorization(); len(a) != 0 {
		t.Errorf("the download host received %d Authorization headers", len(a))
	}
	for _, f := range got.res.Files {
		if f.Status == raw.StatusReady && f.ReportID != "" && (strings.Contains(f.Request, "signature") || !strings.Contains(f.Request, "/files/")) {
			t.Errorf("Request %q: want the download host's URL without its signed query", f.Request)
		}
	}
}

// TestCreateModeChunks: a 200-day range gives 3 reports per type.
func TestCreateModeChunks(t *testing.T) {
	n := newNetwork(t, sandbox.Faults{}, func(s *sandbox.Config, e *extract.Config) {
		s.Start, s.Days = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 2
		now := func() time.Time { return time.Date(2026, 8, 1, 6, 0, 0, 0, time.UTC) }
		s.Now, e.Now = now, now
	})
	req := extract.Request{Reports: window(t, "2026-01-01", "2026-07-19"), ReportTypes: []string{raw.ReportPaymentOps}}
	got := n.extract(t, req)
	if got.err != nil {
		t.Fatal(got.err)
	}
	if c := got.requests["POST /v1/reports"]; c != 3 {
		t.Errorf("%d reports created, want 3", c)
	}
	var windows []string
	for _, f := range got.res.Files {
		windows = append(windows, f.Window.String()+" "+f.Status)
	}
	want := []string{"2026-01-01..2026-03-31 READY", "2026-04-01..2026-06-29 EMPTY", "2026-06-30..2026-07-19 EMPTY"}
	if diff := cmp.Diff(want, windows); diff != "" {
		t.Errorf("report files (-want +got):\n%s", diff)
	}
}

// TestWindowTooOldIsRefusedBeforeAnyRequest: 9 months back is the limit.
func TestWindowTooOldIsRefusedBeforeAnyRequest(t *testing.T) {
	tests := []struct {
		from    string
		refused bool
	}{
		{"2026-01-05", true},  // 9 months before 2026-10-06 is 2026-01-06
		{"2026-01-06", false}, // the oldest day allowed
	}
	for _, tt := range tests {
		t.Run(tt.from, func(t *testing.T) {
			n := newNetwork(t, sandbox.Faults{})
			got := n.extract(t, extract.Request{Reports: window(t, tt.from, tt.from), ReportTypes: []string{raw.ReportRecon}})
			if refused := errors.Is(got.err, extract.ErrWindowTooOld); refused != tt.refused {
				t.Fatalf("error = %v, want refused %v", got.err, tt.refused)
			}
			if tt.refused && got.total() != 0 {
				t.Errorf("%d requests before the refusal: %v", got.total(), got.requests)
			}
			if !tt.refused && got.requests["POST /v1/reports"] != 1 {
				t.Errorf("requests %v, want the report created", got.requests)
			}
		})
	}
}

// TestCollectMode picks the scheduled reports covering a window and names
// the days none covers.
func TestCollectMode(t *testing.T) {
	tests := []struct {
		from, to  string
		want      []string // report files: window and status
		wantGaps  []string
		wantFails int
	}{
		{"2026-10-20", "2026-11-14", []string{"2026-10-01..2026-10-31 READY", "2026-11-01..2026-11-14 READY"}, nil, 0},
		{"2026-11-03", "2026-11-03", []string{"2026-11-01..2026-11-14 READY"}, nil, 0},
		{"2026-10-20", "2026-11-16", []string{"2026-10-01..2026-10-31 READY", "2026-11-01..2026-11-14 READY", "2026-11-15..2026-11-16 FAILED"},
			[]string{"2026-11-15..2026-11-16"}, 0},
		{"2026-08-25", "2026-09-03", []string{"2026-08-25..2026-08-31 FAILED", "2026-09-01..2026-09-30 READY"}, []string{"2026-08-25..2026-08-31"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.from+".."+tt.to, func(t *testing.T) {
			n := newNetwork(t, sandbox.Faults{}, func(s *sandbox.Config, e *extract.Config) {
				s.Start, s.Days, s.PaymentsPerDay = time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), 76, 4
				now := func() time.Time { return time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC) }
				s.Now, e.Now = now, now
			})
			req := extract.Request{Reports: window(t, tt.from, tt.to), ReportTypes: []string{raw.ReportPaymentOps}, Mode: extract.ModeCollect}
			got := n.extract(t, req)
			if got.err != nil {
				t.Fatal(got.err)
			}
			var files []string
			for _, f := range got.res.Files {
				files = append(files, f.Window.String()+" "+f.Status)
			}
			if diff := cmp.Diff(tt.want, files); diff != "" {
				t.Errorf("report files (-want +got):\n%s", diff)
			}
			var gaps []string
			for _, g := range tt.wantGaps {
				gaps = append(gaps, "no SCHEDULER report of PAYMENT_OPS (CSV) covers "+g)
			}
			if diff := cmp.Diff(gaps, got.res.Incomplete); diff != "" {
				t.Errorf("incomplete (-want +got):\n%s", diff)
			}
			if got.requests["POST /v1/reports"] != 0 || got.requests["DELETE /v1/reports/{id}"] != 0 || got.requests["GET /v1/reports"] != 1 {
				t.Errorf("requests %v: want one listing, no report created or deleted", got.requests)
			}
		})
	}
}

// TestCleanupDeletesCreatedReports: downloaded and EMPTY reports are
// deleted, FAILED ones kept for the provider's support.
func TestCleanupDeletesCreatedReports(t *testing.T) {
	n := newNetwork(t, sandbox.Faults{FailedReports: 0.4}, func(_ *sandbox.Config, e *extract.Config) { e.ReportTries = 4 })
	req := fullRequest(t, n.sb, raw.FormatCSV)
	req.Cleanup = true
	got := n.extract(t, req)
	if got.err != nil {
		t.Fatal(got.err)
	}
	created, failed := got.requests["POST /v1/reports"], got.injected["failed_report"]
	if failed == 0 {
		t.Fatal("no report FAILED")
	}
	if d := got.requests["DELETE /v1/reports/{id}"]; d != created-failed {
		t.Errorf("%d reports deleted, want %d created - %d FAILED", d, created, failed)
	}
	left, err := n.client.ListReports(t.Context(), extract.CreatedByAPI)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range left {
		if r.Status != raw.StatusFailed {
			t.Errorf("report %s (%s) left after cleanup", r.ID, r.Status)
		}
	}
	if len(left) != failed {
		t.Errorf("%d reports left, want the %d FAILED", len(left), failed)
	}
}

// TestServerSources checks the server API files: payments by executed_at
// and by modified_at in the window, transfers paged newest first until past the window,
// balances keyed by the Date header.
func TestServerSources(t *testing.T) {
	n := newNetwork(t, sandbox.Faults{})
	w := window(t, "2026-10-02", "2026-10-02")
	got := n.extract(t, extract.Request{Reports: w, ReportTypes: []string{raw.ReportPaymentOps}, Server: w})
	if got.err != nil {
		t.Fatal(got.err)
	}
	bySource := map[string][]raw.File{}
	for _, f := range got.res.Files {
		bySource[f.Source] = append(bySource[f.Source], f)
	}
	var paths []string
	for _, s := range slices.Sorted(maps.Keys(bySource)) {
		for _, f := range bySource[s] {
			if f.ReportID == "" {
				paths = append(paths, f.Path)
			}
		}
	}
	wantPaths := []string{"balances/balances.json", "fees/p0000.json", "payments/2026-10-02_2026-10-02_p0000.json",
		"payments/modified_2026-10-02_2026-10-02_p0000.json", "payments/modified_2026-10-02_2026-10-02_p0001.json",
		"payment_labels/AWAITING_COLLECTION_p0000.json", "payment_labels/FORWARDED_p0000.json", // the label sweep
		"payment_labels/OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY_p0000.json",
		"payment_labels/OUTBOUND_TRANSFER_FAILED_RECOVERABLY_p0000.json", "transfers/p0000.json"}
	if diff := cmp.Diff(wantPaths, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if b := bySource[raw.SourceBalance][0]; !b.FetchedAt.Equal(now0) {
		t.Errorf("balances FetchedAt %v, want the Date header %v", b.FetchedAt, now0)
	}
	for i, field := range []string{"EXECUTED_AT", "MODIFIED_AT"} {
		p := bySource[raw.SourcePayment][i]
		if !strings.Contains(p.Request, "range_field="+field) || !strings.Contains(p.Request, "after=2026-10-01T23%3A59%3A59.999Z") ||
			!strings.Contains(p.Request, "before=2026-10-03T00%3A00%3A00.000Z") || !strings.Contains(p.Request, "size=100") {
			t.Errorf("payments request %q, want range_field %s", p.Request, field)
		}
	}
	if tr := bySource[raw.SourceTransfer][0]; !strings.Contains(tr.Request, "sort_field=CREATED_AT") || !strings.Contains(tr.Request, "size=100") {
		t.Errorf("transfers request %q", tr.Request)
	}
}

// TestTransferPagesStopPastTheWindow: newest first, small pages, stop at
// the first page that reaches before the window.
func TestTransferPagesStopPastTheWindow(t *testing.T) {
	n := newNetwork(t, sandbox.Faults{})
	since := time.Date(2026, 10, 3, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	files, err := n.client.SaveTransferPages(t.Context(), dir, since, 2)
	if err != nil {
		t.Fatal(err)
	}
	pages := len(files)
	var oldest time.Time
	for _, f := range files {
		body, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Content []struct {
				CreatedAt time.Time `json:"created_at"`
			} `json:"content"`
			Last bool `json:"last"`
		}
		mustDecode(t, body, &p)
		if p.Last {
			t.Fatal("paged to the last page: the stop rule did not apply")
		}
		oldest = p.Content[len(p.Content)-1].CreatedAt
	}
	if !oldest.Before(since) {
		t.Errorf("the last page fetched ends at %v, not before %v", oldest, since)
	}
	if got := n.sb.Requests()["GET /v4/transfers"]; got != pages {
		t.Errorf("%d requests for %d pages", got, pages)
	}
}

// TestPlanIsWhatExtractRuns: the plan of a request lists one call per job
// Extract starts (the token aside), and each paged source's first page is
// the request its call names.
func TestPlanIsWhatExtractRuns(t *testing.T) {
	n := newNetwork(t, sandbox.Faults{})
	req := fullRequest(t, n.sb, raw.FormatJSON)
	calls, err := n.client.Plan(req)
	if err != nil {
		t.Fatal(err)
	}
	planned := 0
	ctx := extract.WithTrace(t.Context(), &extract.Trace{Planned: func(jobs int) { planned = jobs }})
	res, err := n.client.Extract(ctx, req, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if calls[0].What != "token" || len(calls)-1 != planned {
		t.Errorf("plan of %d calls (token first: %v), Extract started %d jobs", len(calls), calls[0].What == "token", planned)
	}
	requests := map[string]bool{}
	for _, c := range calls {
		requests[c.Request] = true
	}
	for _, f := range res.Files {
		if f.ReportID == "" && f.Page == 0 && f.Source != raw.SourceLiquidation && !requests[f.Request] {
			t.Errorf("%s %s: first request %q is not in the plan", f.Source, f.Path, f.Request)
		}
	}
}

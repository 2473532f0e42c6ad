package sandbox_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
)

// list GETs every page of a paged list (items under field) with the given size.
func (e *env) list(t *testing.T, tok, path, field string, size int) []map[string]any {
	t.Helper()
	var items []map[string]any
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for page := 0; ; page++ {
		resp, b := e.call(t, "GET", path+sep+"page="+strconv.Itoa(page)+"&size="+strconv.Itoa(size), tok, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s page %d: %d %s", path, page, resp.StatusCode, b)
		}
		env := decode(t, b)
		for _, k := range []string{"first", "last", "number", "numberOfElements", "size", "totalElements", "totalPages", "sort", field} {
			if _, ok := env[k]; !ok {
				t.Fatalf("%s: envelope lacks %s", path, k)
			}
		}
		if env["number"] != json.Number(strconv.Itoa(page)) || env["first"] != (page == 0) {
			t.Fatalf("%s page %d: number %v first %v", path, page, env["number"], env["first"])
		}
		for _, it := range env[field].([]any) {
			items = append(items, it.(map[string]any))
		}
		if env["last"] == true {
			if n, _ := env["totalElements"].(json.Number).Int64(); int(n) != len(items) {
				t.Fatalf("%s: %d items, totalElements %d", path, len(items), n)
			}
			return items
		}
	}
}

func dec(t *testing.T, v any) decimal.Decimal {
	t.Helper()
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case string:
		s = v
	default:
		t.Fatalf("amount %v (%T)", v, v)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// report downloads a whole report over the generated days as CSV rows.
func (e *env) rows(t *testing.T, tok, typ string) []map[string]string {
	t.Helper()
	status, b := e.fetchReport(t, tok, typ, raw.FormatCSV, window(t, "2026-10-01", "2026-10-03"))
	if status != 200 {
		t.Fatalf("%s: %d", typ, status)
	}
	return readCSV(t, b)
}

// TestLiquidationSummariesLackTrades: with Faults.LiquidationSummaries the
// list items are the records without trade_requests.
func TestLiquidationSummariesLackTrades(t *testing.T) {
	e := start(t, sandbox.Config{BreaksPerDay: -1, Faults: sandbox.Faults{LiquidationSummaries: true}})
	tok := e.token(t)
	list := e.list(t, tok, "/liquidations?start_date="+stamp(day0)+"&end_date="+stamp(day0.AddDate(0, 0, 4)), "results", 200)
	if len(list) == 0 {
		t.Fatal("no liquidations")
	}
	for _, item := range list {
		if _, has := item["trade_requests"]; has {
			t.Errorf("summary %s carries trade_requests", item["id"])
		}
	}
}

// TestLiquidationsAgreeWithTheReports: one liquidation per received
// cross-currency payment that moved money, whose totals agree with its
// trades and executions and with the payment's RECON destination trade.
func TestLiquidationsAgreeWithTheReports(t *testing.T) {
	e := start(t, sandbox.Config{BreaksPerDay: -1})
	tok := e.token(t)
	from, to := stamp(day0), stamp(day0.AddDate(0, 0, 4))
	list := e.list(t, tok, "/liquidations?start_date="+from+"&end_date="+to, "results", 13)
	if again := e.list(t, tok, "/liquidations?start_date="+from+"&end_date="+to, "results", 200); !cmp.Equal(list, again) {
		t.Error("pages of 13 and of 200 differ")
	}
	want := map[string]bool{}
	for _, r := range e.rows(t, tok, raw.ReportPaymentOps) {
		if r["destination_exchange"] != "" && (r["payment_state"] == "COMPLETED" || r["payment_state"] == "EXECUTED") {
			want[r["network_payment_id"]] = true
		}
	}
	proceeds, deposit := map[string]decimal.Decimal{}, map[string]string{}
	for _, r := range e.rows(t, tok, raw.ReportRecon) {
		if v := r["destination_result_adjusted_proceeds"]; v != "" {
			proceeds[r["network_payment_id"]] = proceeds[r["network_payment_id"]].Add(decimal.RequireFromString(v))
			deposit[r["network_payment_id"]] = r["destination_result_amount"]
		}
	}
	got := map[string]bool{}
	prev := ""
	for _, item := range list {
		pid := item["network_payment_id"].(string)
		got[pid] = true
		if _, has := item["trade_requests"]; !has {
			t.Errorf("list item %s lacks trade_requests (whole records unless Faults.LiquidationSummaries)", item["id"])
		}
		if key := item["created_at"].(string) + item["id"].(string); key < prev {
			t.Errorf("list not ordered by created_at at %s", item["id"])
		} else {
			prev = key
		}
		resp, b := e.call(t, "GET", "/liquidations/"+item["id"].(string), tok, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("detail %s: %d %s", item["id"], resp.StatusCode, b)
		}
		l := decode(t, b)
		for k, v := range item {
			if !cmp.Equal(l[k], v) {
				t.Errorf("%s: detail %s = %v, list says %v", item["id"], k, l[k], v)
			}
		}
		amount := dec(t, l["destination_amount"])
		if !amount.Equal(proceeds[pid]) {
			t.Errorf("%s: destination_amount %s, RECON adjusted proceeds %s", pid, amount, proceeds[pid])
		}
		es, ts := l["execution_summary"].(map[string]any), l["trading_summary"].(map[string]any)
		if !dec(t, es["total_fiat"]).Equal(amount) || !dec(t, ts["total_fiat_executed"]).Equal(amount) ||
			!dec(t, ts["total_fiat_non_deliverable"]).IsZero() || !dec(t, ts["total_fiat_in_flight"]).IsZero() ||
			!dec(t, es["total_xrp"]).Equal(decimal.RequireFromString(deposit[pid])) || l["status"] != "COMPLETED" {
			t.Errorf("%s: summaries %v %v status %v disagree with destination_amount %s and XRP %s", pid, es, ts, l["status"], amount, deposit[pid])
		}
		var sumTR, sumXRP, sumFee decimal.Decimal
		trades := 0
		for _, trAny := range l["trade_requests"].([]any) {
			tr := trAny.(map[string]any)
			var net decimal.Decimal
			for _, exAny := range tr["trade_executions"].([]any) {
				ex := exAny.(map[string]any)
				trades++
				sumXRP = sumXRP.Add(dec(t, ex["source_amount"]))
				sumFee = sumFee.Add(dec(t, ex["fee"]))
				net = net.Add(dec(t, ex["destination_amount"]).Sub(dec(t, ex["fee"])))
				if at := ex["executed_at"].(string); at < l["created_at"].(string) || at > l["modified_at"].(string) || ex["status"] != "EXECUTED" {
					t.Errorf("%s: execution at %s, liquidation %s..%s", pid, at, l["created_at"], l["modified_at"])
				}
			}
			if !dec(t, tr["amount"]).Equal(net) || tr["status"] != "COMPLETED" {
				t.Errorf("%s: trade request amount %v, its executions net %s", pid, tr["amount"], net)
			}
			sumTR = sumTR.Add(net)
		}
		if !sumTR.Equal(amount) || !sumXRP.Equal(dec(t, es["total_xrp"])) || !sumFee.Equal(dec(t, es["total_receiver_fees"])) ||
			es["total_trades"] != json.Number(strconv.Itoa(trades)) {
			t.Errorf("%s: trades sum to %s fiat, %s XRP, %s fees in %d executions; summary %v", pid, sumTR, sumXRP, sumFee, trades, es)
		}
		resp, b = e.call(t, "GET", "/liquidations/network-payment-id/"+pid, tok, nil)
		var byPayment []map[string]any
		if err := json.Unmarshal(b, &byPayment); err != nil || resp.StatusCode != 200 || len(byPayment) != 1 || byPayment[0]["id"] != l["id"] {
			t.Errorf("by payment %s: %d %s", pid, resp.StatusCode, b)
		}
	}
	if len(got) == 0 || !cmp.Equal(want, got) {
		t.Errorf("liquidations of %d payments, want the %d received cross-currency ones that moved money", len(got), len(want))
	}
	for _, bad := range []string{"/liquidations?size=201", "/liquidations?start_date=yesterday", "/liquidations/" + "00000000-0000-4000-8000-000000000000"} {
		if resp, b := e.call(t, "GET", bad, tok, nil); resp.StatusCode/100 != 4 || decode(t, b)["correlationId"] == nil {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, b)
		}
	}
}

// TestPaymentsAgreeWithTheReports: GET /v4/payments by executed_at gives
// the reports' executed payments, with the same states, ids and amounts.
func TestPaymentsAgreeWithTheReports(t *testing.T) {
	e := start(t, sandbox.Config{BreaksPerDay: -1})
	tok := e.token(t)
	after, before := stamp(day0.Add(-time.Millisecond)), stamp(day0.AddDate(0, 0, 1))
	path := "/v4/payments?range_field=EXECUTED_AT&after=" + after + "&before=" + before
	items := e.list(t, tok, path, "content", 100)
	if small := e.list(t, tok, path, "content", 7); !cmp.Equal(items, small) {
		t.Error("pages of 7 and of 100 differ")
	}
	ops := map[string]map[string]string{}
	for _, r := range e.rows(t, tok, raw.ReportPaymentOps) {
		if r["executed_at"] >= stamp(day0) && r["executed_at"] < before {
			ops[r["network_payment_id"]] = r
		}
	}
	if len(items) == 0 || len(items) != len(ops) {
		t.Fatalf("%d payments executed on the first day, the report has %d", len(items), len(ops))
	}
	amend := 0
	for _, p := range items {
		r := ops[p["payment_id"].(string)]
		c := p["contract"].(map[string]any)
		q := c["quote"].(map[string]any)
		role := p["internal_info"].(map[string]any)["connector_role"]
		wantRole := "RECEIVING"
		if slices.Contains(e.s.Accounts(), r["sender_address"]) {
			wantRole = "SENDING"
		}
		if r == nil || p["payment_state"] != r["payment_state"] || p["executed_at"] != r["executed_at"] ||
			c["sender_end_to_end_id"] != r["end_to_end_id"] || q["sender_address"] != r["sender_address"] ||
			q["receiver_address"] != r["receiver_address"] || q["amount"] != r["sent_amount"] ||
			q["currency_code"] != r["sent_currency"] || role != wantRole {
			t.Errorf("payment %v disagrees with its PAYMENT_OPS row %v", p["payment_id"], r)
		}
		for _, l := range p["internal_info"].(map[string]any)["labels"].([]any) {
			if l.(map[string]any)["label"] == "AMEND" {
				amend++
			}
		}
	}
	// FAILED payments never executed: only the list by modified_at (the failure) has them.
	failed := map[string]bool{}
	for _, r := range e.rows(t, tok, raw.ReportPaymentOps) {
		if r["payment_state"] == "FAILED" && r["quote_ts"] < before {
			failed[r["network_payment_id"]] = true
		}
	}
	byModified := map[string]bool{}
	for _, p := range e.list(t, tok, "/v4/payments?range_field=MODIFIED_AT&after="+after+"&before="+stamp(day0.AddDate(0, 0, 2)), "content", 100) {
		if p["payment_state"] == "FAILED" {
			byModified[p["payment_id"].(string)] = true
		}
	}
	byExecuted := map[string]bool{}
	for _, p := range items {
		byExecuted[p["payment_id"].(string)] = true
	}
	for id := range failed {
		if !byModified[id] || byExecuted[id] {
			t.Errorf("FAILED payment %s: listed by modified_at %v, by executed_at %v", id, byModified[id], byExecuted[id])
		}
	}
	if len(failed) == 0 {
		t.Error("no FAILED payment on the first day")
	}
	labelled := e.list(t, tok, "/v4/payments?with_labels=AMEND", "content", 100)
	all := e.list(t, tok, "/v4/payments", "content", 100)
	if len(labelled) == 0 || len(labelled) >= len(all) {
		t.Errorf("%d of %d payments carry AMEND", len(labelled), len(all))
	}
	for _, bad := range []string{"/v4/payments?range_field=EXECUTED_AT", "/v4/payments?after=" + after,
		"/v4/payments?range_field=EXECUTED_AT&after=2026-10-01T00:00:00Z", "/v4/payments?range_field=PAID_AT&after=" + after,
		"/v4/payments?size=101"} {
		if resp, b := e.call(t, "GET", bad, tok, nil); resp.StatusCode != 400 || decode(t, b)["ripplenet_error_code"] != "E0120" {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, b)
		}
	}
}

// TestTransfersAndBalancesAgreeWithStatements: without injected breaks, the
// transfers are the statements' TRANSFER and EXCHANGE_TRANSFER entries (an
// exchange transfer between two of our accounts once, its amount the
// sender's), newest first; the balances are the closing balances of
// statements up to now.
func TestTransfersAndBalancesAgreeWithStatements(t *testing.T) {
	e := start(t, sandbox.Config{BreaksPerDay: -1})
	tok := e.token(t)
	type transfer struct{ ID, At, Amount string }
	var want []transfer
	closing := map[string]string{}
	types := map[string]int{}
	for _, acct := range e.s.Accounts() {
		pages := e.statement(t, tok, acct, day0, now0, 100)
		closing[acct] = pages[0].ClosingBalance.StringFixed(2)
		for _, p := range pages {
			for _, c := range p.Transactions.Content {
				types[c.TransactionType]++
				if c.TransactionType == "TRANSFER" || c.TransactionType == "EXCHANGE_TRANSFER" && c.BalanceChange.IsNegative() {
					want = append(want, transfer{c.TransactionID, c.CreatedAt, c.BalanceChange.Abs().StringFixed(2)})
				}
			}
		}
	}
	if types["TRANSFER"] == 0 || types["EXCHANGE_TRANSFER"] == 0 {
		t.Errorf("entries by type %v, want transfers and exchange transfers", types)
	}
	slices.SortFunc(want, func(a, b transfer) int { return -strings.Compare(a.At+a.ID, b.At+b.ID) })
	var got []transfer
	for _, it := range e.list(t, tok, "/v4/transfers?sort_field=CREATED_AT", "content", 5) {
		got = append(got, transfer{it["transfer_id"].(string), it["created_at"].(string), it["amount"].(string)})
	}
	if len(want) == 0 {
		t.Fatal("no TRANSFER entries")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transfers differ from the statements' TRANSFER entries (-want +got):\n%s", diff)
	}

	resp, b := e.call(t, "GET", "/v4/monitor/balances", tok, nil)
	if d, err := http.ParseTime(resp.Header.Get("Date")); err != nil || !d.Equal(now0) {
		t.Errorf("Date %q, want the sandbox's now", resp.Header.Get("Date"))
	}
	bal := map[string]string{}
	for _, cb := range decode(t, b)["local_balance"].(map[string]any)["currency_balances"].([]any) {
		for _, ab := range cb.(map[string]any)["account_balances"].([]any) {
			a := ab.(map[string]any)
			bal[a["account_name"].(string)] = dec(t, a["balance"]).StringFixed(2)
		}
	}
	if diff := cmp.Diff(closing, bal); diff != "" {
		t.Errorf("balances differ from the statements' closing balances (-closing +balances):\n%s", diff)
	}

	fees := e.list(t, tok, "/v4/config/fees", "content", 3)
	if len(fees) < 3 || !cmp.Equal(fees, e.list(t, tok, "/v4/config/fees", "content", 100)) {
		t.Errorf("%d fees, or pages of 3 and 100 differ", len(fees))
	}
	for _, f := range fees {
		if f["feeId"] == nil || f["fee_type"] == nil || f["role_type"] == nil {
			t.Errorf("fee %v", f)
		}
	}
}

// TestFaultKnobs checks each knob on the wire, and that every draw repeats
// with the seed.
func TestFaultKnobs(t *testing.T) {
	t.Run("429 and 5xx, at most max_consecutive in a row", func(t *testing.T) {
		e := start(t, sandbox.Config{Faults: sandbox.Faults{RateLimit: 0.5, ServerErrors: 0.5, RetryAfter: 3}})
		var codes []int
		for range 9 {
			resp, _ := e.call(t, "POST", extract.PathToken, "", goodToken)
			codes = append(codes, resp.StatusCode)
			if resp.StatusCode == 429 && resp.Header.Get("Retry-After") != "3" {
				t.Errorf("429 with Retry-After %q", resp.Header.Get("Retry-After"))
			}
		}
		// Every draw is a fault, so two faults then a pass, over and over.
		for i, c := range codes {
			if pass := i%3 == 2; pass != (c == 200) || !pass && c != 429 && c/100 != 5 {
				t.Errorf("answers %v: want two faults then a 200, three times", codes)
				break
			}
		}
		again := start(t, sandbox.Config{Faults: sandbox.Faults{RateLimit: 0.5, ServerErrors: 0.5, RetryAfter: 3}})
		var codes2 []int
		for range 9 {
			resp, _ := again.call(t, "POST", extract.PathToken, "", goodToken)
			codes2 = append(codes2, resp.StatusCode)
		}
		if !cmp.Equal(codes, codes2) || e.s.Injected()["rate_limit"]+e.s.Injected()["server_error"] != 6 {
			t.Errorf("same seed, answers %v then %v; injected %v", codes, codes2, e.s.Injected())
		}
	})
	t.Run("faults leave the data as it is", func(t *testing.T) {
		w := window(t, "2026-10-01", "2026-10-03")
		plain := start(t, sandbox.Config{})
		faulty := start(t, sandbox.Config{Faults: sandbox.Faults{RateLimit: 0.3, ServerErrors: 0.3, FailedReports: 0.5, TokenUses: 3}})
		junk := start(t, sandbox.Config{Faults: sandbox.Faults{MalformedRows: 0.1}})
		for _, typ := range raw.ReportTypes {
			a, n := writeReport(t, plain.s, typ, raw.FormatCSV, w)
			b, m := writeReport(t, faulty.s, typ, raw.FormatCSV, w)
			c, k := writeReport(t, junk.s, typ, raw.FormatCSV, w)
			if !bytes.Equal(a, b) || n != m || k != n {
				t.Errorf("%s: faults changed the report", typ)
			}
			// The malformed rows are extra lines: without them the report is the same.
			lines := strings.Split(string(a), "\n")
			var kept []string
			for _, l := range strings.Split(string(c), "\n") {
				if slices.Contains(lines, l) {
					kept = append(kept, l)
				}
			}
			if strings.Join(kept, "\n") != string(a) || len(c) <= len(a) && typ == raw.ReportRecon {
				t.Errorf("%s: malformed rows changed the good ones, or none was added", typ)
			}
		}
	})
	t.Run("truncated downloads", func(t *testing.T) {
		e := start(t, sandbox.Config{PendingPolls: -1, Faults: sandbox.Faults{Truncate: 1}})
		tok := e.token(t)
		_, b := e.call(t, "POST", extract.PathReports, tok, reportRequest(raw.ReportPaymentOps, raw.FormatCSV, window(t, "2026-10-01", "2026-10-01")))
		id := decode(t, b)["reportId"].(string)
		var got []string
		for range 3 {
			req, _ := http.NewRequestWithContext(t.Context(), "GET", e.srv.URL+extract.PathReportDownload+id, nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			got = append(got, strconv.FormatBool(err != nil && int64(len(body)) < resp.ContentLength))
		}
		if want := []string{"true", "true", "false"}; !cmp.Equal(want, got) {
			t.Errorf("truncated: %v, want %v (two faults in a row at most)", got, want)
		}
	})
	t.Run("token expires after token_uses requests", func(t *testing.T) {
		e := start(t, sandbox.Config{Faults: sandbox.Faults{TokenUses: 2}})
		tok := e.token(t)
		var codes []int
		for range 3 {
			resp, _ := e.call(t, "GET", "/v4/config/fees", tok, nil)
			codes = append(codes, resp.StatusCode)
		}
		resp, _ := e.call(t, "GET", "/v4/config/fees", e.token(t), nil) // the refused request, with a newer token
		codes = append(codes, resp.StatusCode)
		if want := []int{200, 200, 401, 200}; !cmp.Equal(want, codes) || e.s.Injected()["token_expired"] != 1 {
			t.Errorf("answers %v, want %v; injected %v", codes, want, e.s.Injected())
		}
	})
	t.Run("FAILED and EMPTY reports", func(t *testing.T) {
		for _, tt := range []struct {
			faults sandbox.Faults
			want   string
		}{{sandbox.Faults{FailedReports: 1}, "FAILED"}, {sandbox.Faults{EmptyReports: 1}, "EMPTY"}} {
			e := start(t, sandbox.Config{PendingPolls: -1, Faults: tt.faults})
			tok := e.token(t)
			_, b := e.call(t, "POST", extract.PathReports, tok, reportRequest(raw.ReportRecon, raw.FormatCSV, window(t, "2026-10-01", "2026-10-03")))
			if s := decode(t, b)["reportStatus"]; s != tt.want {
				t.Errorf("status %v, want %s", s, tt.want)
			}
		}
	})
}

// TestDownloadHost: with download_host, READY reports link to the second
// listener with a signature; it serves them without a token, refuses a bad
// signature, and records any Authorization header it gets.
func TestDownloadHost(t *testing.T) {
	files := httptest.NewUnstartedServer(nil)
	defer files.Close()
	e := start(t, sandbox.Config{PendingPolls: -1, FilesURL: "http://" + files.Listener.Addr().String(), Faults: sandbox.Faults{DownloadHost: true}})
	files.Config.Handler = e.s.FilesHandler()
	files.Start()
	tok := e.token(t)
	w := window(t, "2026-10-01", "2026-10-01")
	_, b := e.call(t, "POST", extract.PathReports, tok, reportRequest(raw.ReportPaymentOps, raw.FormatJSON, w))
	_, b = e.call(t, "GET", extract.PathReports+"/"+decode(t, b)["reportId"].(string), tok, nil)
	link := decode(t, b)["downloadLink"].(string)
	if !strings.HasPrefix(link, files.URL+"/files/") || !strings.Contains(link, "signature=") {
		t.Fatalf("downloadLink %s, want a signed link on %s", link, files.URL)
	}
	want, _ := writeReport(t, e.s, raw.ReportPaymentOps, raw.FormatJSON, w)
	if resp, got := e.call(t, "GET", link, "", nil); resp.StatusCode != 200 || !bytes.Equal(got, want) {
		t.Errorf("download: %d, %d bytes, want the %d of the report", resp.StatusCode, len(got), len(want))
	}
	u, _ := url.Parse(link)
	q := u.Query()
	q.Set("signature", "0"+q.Get("signature"))
	u.RawQuery = q.Encode()
	if resp, _ := e.call(t, "GET", u.String(), "", nil); resp.StatusCode != 403 {
		t.Errorf("bad signature: %d, want 403", resp.StatusCode)
	}
	if len(e.s.FilesAuthorization()) != 0 {
		t.Fatal("recorded a header that was not sent")
	}
	e.call(t, "GET", link, "leaked-token", nil)
	if got := e.s.FilesAuthorization(); !cmp.Equal(got, []string{"Bearer leaked-token"}) {
		t.Errorf("FilesAuthorization = %v", got)
	}
}

func TestLoadProfile(t *testing.T) {
	var cfg sandbox.Config
	profile := `{"rate_limit": 0.1, "server_errors": 0.05, "latency": "20ms", "token_uses": 50, "pending_polls": 4,
		"token_ttl": "2m", "failed_reports": 0.2, "truncated_downloads": 0.3, "malformed_rows": 0.01}`
	if err := sandbox.LoadProfile(strings.NewReader(profile), &cfg); err != nil {
		t.Fatal(err)
	}
	want := sandbox.Faults{RateLimit: 0.1, ServerErrors: 0.05, Latency: sandbox.Duration(20 * time.Millisecond), TokenUses: 50,
		FailedReports: 0.2, Truncate: 0.3, MalformedRows: 0.01}
	if !cmp.Equal(want, cfg.Faults) || cfg.PendingPolls != 4 || cfg.TokenTTL != 2*time.Minute {
		t.Errorf("profile gave %+v, pending %d, ttl %v", cfg.Faults, cfg.PendingPolls, cfg.TokenTTL)
	}
	for _, bad := range []string{`{"rate_limits": 0.1}`, `{"latency": 20}`, `not json`} {
		if err := sandbox.LoadProfile(strings.NewReader(bad), &cfg); err == nil {
			t.Errorf("LoadProfile accepted %s", bad)
		}
	}
	for name, f := range map[string]sandbox.Faults{
		"rate above 1":             {RateLimit: 1.5},
		"rates summing above 1":    {RateLimit: 0.6, ServerErrors: 0.6},
		"download host no address": {DownloadHost: true},
		"negative latency":         {Latency: -1},
	} {
		if _, err := sandbox.New(sandbox.Config{Start: day0, Days: 1, Faults: f}); err == nil {
			t.Errorf("%s: New accepted %+v", name, f)
		}
	}
}

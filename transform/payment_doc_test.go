package transform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"recon/extract/raw"
)

// TestPaymentDirectMatchesDecoded checks that a payment read from its
// objects in one pass (a direct paymentDoc) gives the rows, children and
// rejections that decoding it gives, and that a payment the decoders would
// read otherwise is not direct.
func TestPaymentDirectMatchesDecoded(t *testing.T) {
	var items []json.RawMessage
	for _, dir := range []string{"sources", "sources_malformed"} {
		pages, err := filepath.Glob(filepath.Join("..", "testdata", "load", dir, "payments", "*.json"))
		if err != nil || len(pages) == 0 {
			t.Fatalf("no payment pages in %s: %v", dir, err)
		}
		for _, p := range pages {
			body, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			content, err := raw.Content.Items(body)
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, content...)
		}
	}
	var base bytes.Buffer
	if err := json.Compact(&base, items[0]); err != nil {
		t.Fatal(err)
	}
	// variant replaces the first old of the first payment, which must hold it.
	variant := func(old, new string) string {
		if !strings.Contains(base.String(), old) {
			t.Fatalf("the first payment has no %s", old)
		}
		return strings.Replace(base.String(), old, new, 1)
	}
	cases := []struct {
		name   string
		text   string
		direct bool
	}{
		{"compact", base.String(), true},
		{"known object null", variant(`"contract":{`, `"contract":null,"x_contract":{`), true},
		{"escaped value", variant(`"contract_hash":"c0ffee`, `"contract_hash":"\u00e9c0ffee`), true},
		{"element not an object", variant(`"execution_results":[`, `"execution_results":[5,`), true},
		{"fee total not an object", variant(`"total_fees":[`, `"total_fees":["x",`), true},
		{"element key escaped", variant(`"quote_element_id"`, `"quote_element\u005fid"`), true},
		{"invalid UTF-8", variant(`"contract_hash":"c0ffee`, "\"contract_hash\":\"\xffc0ffee"), true},
		{"user info", variant(`"user_info":[`, `"user_info":[{"node_address":"rn.a","accepted":[{"created_at":"2026-10-01T01:46:38.056Z","subState":"x"},7]},"x",`), true},
		{"list not an array", variant(`"liquidation_execution_results":[]`, `"liquidation_execution_results":"none"`), true},
		{"known object a string", variant(`"liquidation_details":null`, `"liquidation_details":"gone"`), false},
		{"known object an array", variant(`"liquidation_details":null`, `"liquidation_details":[]`), false},
		{"key twice", variant(`"payment_type":`, `"payment_type":"X","payment_type":`), false},
		{"known object twice", variant(`"contract":{`, `"contract":{"quote":{"quote_id":"first"}},"contract":{`), false},
		{"key in another case", variant(`"payment_type":`, `"Payment_Type":`), false},
		{"key escaped", variant(`"payment_type":`, `"payment\u005ftype":`), false},
		{"not an object", `[1]`, false},
	}
	for i, item := range items {
		cases = append(cases, struct {
			name   string
			text   string
			direct bool
		}{fmt.Sprintf("testdata payment %d", i), string(item), paymentObjects(item, nil).direct})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := json.RawMessage(tc.text)
			doc := paymentObjects(text, nil)
			if doc.direct != tc.direct {
				t.Fatalf("direct = %v, want %v", doc.direct, tc.direct)
			}
			decoded := decodePayment(text)
			if doc.direct && !reflect.DeepEqual(doc.objs, decoded.objs) {
				t.Errorf("objects\n%v\ndecoded\n%v", doc.objs, decoded.objs)
			}
			got, want := paymentRowsText(t, text, doc), paymentRowsText(t, text, decoded)
			if got != want {
				t.Errorf("direct:\n%s\ndecoded:\n%s", got, want)
			}
			if tc.name == "compact" && !strings.Contains(want, "payments: 1 rows") {
				t.Errorf("the compact payment loaded no row:\n%s", want)
			}
		})
	}
}

// paymentRowsText loads one payment into fresh builders and renders every
// table's rows and rejections.
func paymentRowsText(t *testing.T, text json.RawMessage, doc paymentDoc) string {
	t.Helper()
	p := newPaymentParser()
	defer p.release()
	if err := paymentRows(p.bs, pos{file: "p.json", n: 1, path: pathAt("content", 0)}, text, doc); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for i, b := range p.bs {
		if err := b.finish(); err != nil {
			t.Fatal(err)
		}
		n := int64(0)
		for _, r := range p.recs[i] {
			n += r.NumRows()
		}
		fmt.Fprintf(&sb, "%s: %d rows\n", b.t.Name, n)
		for _, r := range p.recs[i] {
			for c := range r.Columns() {
				fmt.Fprintf(&sb, "  %s %v\n", r.ColumnName(c), r.Column(c))
			}
		}
		for _, q := range b.bad {
			fmt.Fprintf(&sb, "  rejected %+v\n", q)
		}
	}
	return sb.String()
}

// TestRejectedElementPaths checks the JSON path a rejected element is
// quarantined with, written out from its steps.
func TestRejectedElementPaths(t *testing.T) {
	for _, c := range []struct {
		path jsonPath
		want string
	}{
		{jsonPath{}, "$"},
		{pathAt("", 2).at("matchers", 1), "$[2].matchers[1]"},
		{pathAt("local_balance", -1).at("currency_balances", 0), "$.local_balance.currency_balances[0]"},
		{pathAt("transactions.content", 7), "$.transactions.content[7]"},
		{pathAt("results", 1).at("trade_requests", 0).at("trade_executions", -1), "$.results[1].trade_requests[0].trade_executions"},
	} {
		if got := c.path.String(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.path, got, c.want)
		}
	}
	text := json.RawMessage(`{"payment_id":"p1","execution_results":[{"execution_result_id":"e1"},5],
		"contract":{"quote":{"quote_elements":["q"]},"fee_info":{"total_fees":[{"fee_currency":"USD","total_fee":"x"}]}},
		"user_info":[{"node_address":"rn.a","accepted":[{"created_at":"2026-10-01T01:46:38.056Z"},7]}]}`)
	p := newPaymentParser()
	defer p.release()
	if err := paymentRows(p.bs, pos{file: "p.json", n: 4, path: pathAt("content", 3)}, text, paymentObjects(text, nil)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range p.bs {
		for _, q := range b.bad {
			got = append(got, q.path)
		}
	}
	want := []string{"$.content[3].contract.fee_info.total_fees[0]", "$.content[3].execution_results[1]",
		"$.content[3].contract.quote.quote_elements[0]", "$.content[3].user_info[0].accepted[1]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rejected at %q, want %q", got, want)
	}
}

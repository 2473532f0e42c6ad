package transform

import (
	"encoding/json"
	"fmt"
	"recon/extract/raw"
	"reflect"
	"testing"

	gojson "github.com/goccy/go-json"
)

// scanInputs are texts the scanner must read as goccy/go-json does, or
// leave to it.
var scanInputs = []string{
	`{}`, `[]`, `{"a":1}`, `{"a" : [1, 2.5e-3, -0, "x\"y\\u00e9"], "b":{"c":null},"a":true}`,
	`[{"a":1}, null, "s", 12, [], {}]`, `{"a":01}`, `{"a":1,}`, `[1,]`, `{"a":1} x`, `[1] ]`,
	`{"a\u0062":1}`, `{"é":1}`, `{"a":"\x"}`, "{\"a\":\"\t\"}", `{"a":tru}`, `{"a":-}`, `{"a":1.}`,
	`{"a":1e}`, `{a:1}`, `[1 2]`, `{"a":1 "b":2}`, `{"a":"\u12"}`, `[`, `{`, `{"a":`, `"s"`, `null`,
	`{"a":"x` + "\xff" + `"}`, `[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]`, `{"a": 1e+10, "b": 0.5E-2}`,
}

// TestScanMatchesGoccy checks scanObject and scanArray give the fields and
// elements goccy/go-json decodes, and accept no text it refuses.
func TestScanMatchesGoccy(t *testing.T) {
	for _, in := range scanInputs {
		if m, ok := scanObject([]byte(in)); ok {
			var want map[string]json.RawMessage
			if err := gojson.Unmarshal([]byte(in), &want); err != nil || !reflect.DeepEqual(m.toMap(), want) {
				t.Errorf("scanObject(%s) = %v, goccy %v (%v)", in, m, want, err)
			}
		}
		var got []json.RawMessage
		if ok, _ := scanArray([]byte(in), func(_ int, e json.RawMessage) error { got = append(got, e); return nil }); ok {
			var want []json.RawMessage
			if err := gojson.Unmarshal([]byte(in), &want); err != nil || len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
				t.Errorf("scanArray(%s) = %q, goccy %q (%v)", in, got, want, err)
			}
		}
	}
	for _, in := range []string{`{"a":01}`, `{"a":1,}`, `{"a\u0062":1}`, `{"é":1}`, `{"a":"\x"}`, `{"a":1} x`} {
		if _, ok := scanObject([]byte(in)); ok {
			t.Errorf("scanObject(%s) accepted", in)
		}
	}
	if _, ok := scanObject([]byte(`{"a" : [1, {"b":"\u00e9"}], "c":null}`)); !ok {
		t.Error("scanObject refused a plain object")
	}
}

// FuzzScan compares the scanner with goccy/go-json on any text.
func FuzzScan(f *testing.F) {
	for _, in := range scanInputs {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if m, ok := scanObject([]byte(in)); ok {
			var want map[string]json.RawMessage
			if err := json.Unmarshal([]byte(in), &want); err != nil || len(m.toMap()) != len(want) {
				t.Fatalf("scanObject(%q) = %v, encoding/json %v (%v)", in, m, want, err)
			}
			if got, want := fieldsRow(m), mapRow(t, in); got != want {
				t.Fatalf("setFields(%q) = %s; as a map: %s", in, got, want)
			}
		}
		if ok, _ := scanArray([]byte(in), func(int, json.RawMessage) error { return nil }); ok && !json.Valid([]byte(in)) {
			t.Fatalf("scanArray(%q) accepted invalid JSON", in)
		}
	})
}

// TestScanContentMatchesDecoding checks that the items scanContent splits
// are those raw.Content.Items decodes, and that it leaves to decoding every
// page decoding reads otherwise or refuses.
func TestScanContentMatchesDecoding(t *testing.T) {
	for _, tc := range []struct {
		page    string
		scanned bool
	}{
		{`{"content":[{"a":1}, 2 ,"x"],"last":true,"number":0,"totalElements":3}`, true},
		{" \n{\"first\": true, \"content\": [], \"last\": null, \"number\": -0, \"size\": {\"a\": [1]}}\n", true},
		{`{"content":[{"a":"\u00e9"}],"results":null,"totalElements":123456789012345678}`, true},
		{`{"content":[1],"results":[{"b":2}]}`, true},
		{`{"content":null,"last":true}`, false},
		{`{"last":true}`, false},
		{`{"content":{"a":1}}`, false},
		{`{"content":[1],"content":[2]}`, false},
		{`{"Content":[1]}`, false},
		{`{"content":[1],"Last":true}`, false},
		{`{"content":[1],"last":"yes"}`, false},
		{`{"content":[1],"number":1.5}`, false},
		{`{"content":[1],"number":1e2}`, false},
		{`{"content":[1],"totalElements":1234567890123456789012}`, false},
		{`{"content":[1],"results":{}}`, false},
		{`{"conte\u006et":[1]}`, false},
		{`{"content":[1,]}`, false},
		{`{"content":[1]} x`, false},
		{`[{"content":[1]}]`, false},
	} {
		items, ok := scanContent([]byte(tc.page))
		if ok != tc.scanned {
			t.Errorf("scanContent(%s) ok = %v, want %v", tc.page, ok, tc.scanned)
			continue
		}
		want, err := raw.Content.Items([]byte(tc.page))
		if ok && (err != nil || !reflect.DeepEqual(rawStrings(items), rawStrings(want))) {
			t.Errorf("scanContent(%s) = %q, decoding %q (%v)", tc.page, rawStrings(items), rawStrings(want), err)
		}
	}
}

func rawStrings(items []json.RawMessage) []string {
	out := make([]string, len(items))
	for i, e := range items {
		out[i] = string(e)
	}
	return out
}

// TestExtraJSONMatchesMarshal: the extras are the object encoding/json
// writes (keys sorted and escaped as it escapes them), plain keys included.
func TestExtraJSONMatchesMarshal(t *testing.T) {
	m := map[string]json.RawMessage{}
	for i, k := range []string{"a", "contract.quote.price_guarantee", "~ space", `quo"te`, `back\slash`, "<tag>",
		"amp&", "tab\t", "ctrl\x01", "del\x7f", "é", "line\u2028sep", "bad\xff", ""} {
		m[k] = json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
	}
	want, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if got := extraJSON(m); got != string(want) {
		t.Errorf("extraJSON:\n%s\nencoding/json:\n%s", got, want)
	}
}

// TestSetFieldsReadsAsAMap checks that a row set from an object's fields in
// their order is the row set from the object decoded into a map, keys
// given twice and two names of one column included.
func TestSetFieldsReadsAsAMap(t *testing.T) {
	for _, in := range []string{
		`{"network_payment_id":"A","sender_amount":"1.5","x":[1]}`,
		`{"network_payment_id":"A","network_payment_id":null}`,
		`{"network_payment_id":null,"network_payment_id":"A"}`,
		`{"network_payment_id":"A","network_payment_id":"B","sender_amount":"2"}`,
		`{"network_payment_id":"A","ripplenet_payment_id":"B"}`,
		`{"network_payment_id":"A","ripplenet_payment_id":"A","network_payment_id":"B"}`,
		`{"ripplenet_payment_id":"A","network_payment_id":"B","network_payment_id":"A"}`,
		`{"x":1,"x":null}`, `{"x":null,"x":1}`, `{"x":1,"y":2,"x":3}`,
	} {
		fs, ok := object(json.RawMessage(in))
		if !ok {
			t.Fatalf("object(%s) refused", in)
		}
		if got, want := fieldsRow(fs), mapRow(t, in); got != want {
			t.Errorf("%s: %s; as a map: %s", in, got, want)
		}
	}
}

// fieldsRow is what setFields makes of fs in a RECON row: its error, or
// its values and extra fields.
func fieldsRow(fs fields) string {
	b := newBuilder(&Recon, nil)
	defer b.release()
	b.reset()
	if err := b.setFields(fs, shape{}); err != nil {
		return err.Error() // the values of a rejected row depend on the map's order
	}
	return fmt.Sprintf("%v %s", b.vals, extraJSON(b.extra))
}

// mapRow is fieldsRow of the object in decoded into a map first.
func mapRow(t *testing.T, in string) string {
	var m map[string]json.RawMessage
	if err := gojson.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	var fs fields
	for k, v := range m {
		fs = append(fs, field{[]byte(k), v})
	}
	return fieldsRow(fs)
}

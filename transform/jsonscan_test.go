package transform

import (
	"encoding/json"
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
			if err := gojson.Unmarshal([]byte(in), &want); err != nil || !reflect.DeepEqual(m, want) {
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
			if err := json.Unmarshal([]byte(in), &want); err != nil || len(m) != len(want) {
				t.Fatalf("scanObject(%q) = %v, encoding/json %v (%v)", in, m, want, err)
			}
		}
		if ok, _ := scanArray([]byte(in), func(int, json.RawMessage) error { return nil }); ok && !json.Valid([]byte(in)) {
			t.Fatalf("scanArray(%q) accepted invalid JSON", in)
		}
	})
}

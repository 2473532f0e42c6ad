package raw_test

import (
	"reflect"
	"testing"

	"recon/extract/raw"
)

// TestCountIsParseWithoutItems: Count gives a page's count, flags and
// errors as Parse does, for items of any JSON type, without the items.
func TestCountIsParseWithoutItems(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  raw.Envelope
		body string
		want int // items; -1: an error
	}{
		{"objects", raw.Content, `{"content":[{"a":1},{"b":[1,{"c":"]"}]},{}],"last":false,"number":2,"totalElements":9}`, 3},
		{"results", raw.Results, `{"results":[{"id":"x"}],"last":true,"number":0,"totalElements":1}`, 1},
		{"statement", raw.Transactions, `{"transactions":{"content":[{"x":1},{"y":2}],"last":true,"number":0,"total_elements":2}}`, 2},
		{"items not objects", raw.Content, `{"content":[{"a":1},"text",7,null,[1]],"last":true,"number":0,"totalElements":5}`, 5},
		{"empty", raw.Content, `{"content":[],"last":true,"number":0,"totalElements":0}`, 0},
		{"no items", raw.Content, `{"last":true,"number":0,"totalElements":0}`, -1},
		{"no total", raw.Transactions, `{"transactions":{"content":[],"last":true,"number":0}}`, -1},
		{"items not a list", raw.Content, `{"content":{"a":1},"last":true,"number":0,"totalElements":1}`, -1},
		{"not JSON", raw.Content, `<html>`, -1},
		{"cut short", raw.Content, `{"content":[{"a":1},{"b":`, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parsed, perr := tc.env.Parse([]byte(tc.body))
			counted, cerr := tc.env.Count([]byte(tc.body))
			if tc.want < 0 {
				if perr == nil || cerr == nil || perr.Error() != cerr.Error() {
					t.Fatalf("errors: Parse %v, Count %v; want the same error", perr, cerr)
				}
				return
			}
			if perr != nil || cerr != nil {
				t.Fatalf("Parse %v, Count %v", perr, cerr)
			}
			if counted.Items != nil || len(parsed.Items) != tc.want {
				t.Errorf("Count kept %d items, Parse read %d; want none and %d", len(counted.Items), len(parsed.Items), tc.want)
			}
			parsed.Items = nil
			if !reflect.DeepEqual(counted, parsed) || counted.Count != tc.want {
				t.Errorf("Count %+v, Parse %+v; want equal, with %d items", counted, parsed, tc.want)
			}
		})
	}
}

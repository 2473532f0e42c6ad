package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// TestTableJSONAsEncoder checks that a listing's JSON, written row by row,
// is byte for byte what encoding/json writes for the same rows as maps.
func TestTableJSONAsEncoder(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		name string
		cols []string
		rows [][]*string
	}{
		{"no rows", []string{"a", "b"}, nil},
		{"one row", []string{"a"}, [][]*string{{s("x")}}},
		{"null and text", []string{"b", "a"}, [][]*string{{s("x"), nil}, {nil, s("")}}},
		{"escapes", []string{"detail", "amount"}, [][]*string{
			{s(`<a href="x">&</a> \ "q"` + "\n\t\x01\u2028"), s("-0.000000000001")},
			{s("\xff invalid utf-8, ünïcode"), s("12")},
		}},
		{"a column named twice keeps the last", []string{"k", "k", "j"}, [][]*string{{s("1"), s("2"), s("3")}}},
		{"no columns", nil, [][]*string{{}, {}}},
		{"key order is byte order", []string{"b_x", "B", "a", "_z", "é"}, [][]*string{{s("1"), s("2"), s("3"), s("4"), s("5")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := encoderJSON(t, tt.cols, tt.rows)
			var got bytes.Buffer
			if err := (table{cols: tt.cols, rows: slices.Values(tt.rows)}).write(&got, "json"); err != nil {
				t.Fatal(err)
			}
			if got.String() != want {
				t.Errorf("got\n%s\nwant\n%s", got.String(), want)
			}
		})
	}
}

// encoderJSON is how a listing's JSON was written before it was streamed:
// every row a map, one indented encoding.
func encoderJSON(t *testing.T, cols []string, rows [][]*string) string {
	out := make([]map[string]*string, len(rows))
	for i, r := range rows {
		out[i] = make(map[string]*string, len(r))
		for j, c := range r {
			out[i][cols[j]] = c
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

package sandbox

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"recon/extract"
)

// TestFormatsAsEncodingJSON: the sandbox's fast paths (ts written by hand,
// goccy/go-json, text without escaping) give exactly what time.Format and
// encoding/json give.
func TestFormatsAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		at := time.UnixMilli(r.Int64N(4102444800000)).In(time.FixedZone("x", 3600))
		if got, want := ts(at), at.UTC().Format(extract.TimeFormat); got != want {
			t.Fatalf("ts(%v) = %s, want %s", at, got, want)
		}
	}
	for _, s := range []text{"plain", `q"uote`, "a<b&c>", "tab\t", "é", "back\\slash"} {
		got, _ := s.MarshalJSON()
		want, _ := json.Marshal(string(s))
		if !bytes.Equal(got, want) {
			t.Errorf("text %q: %s, want %s", s, got, want)
		}
	}
	day := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	s, err := New(Config{Seed: 1, Start: day, Days: 1, PaymentsPerDay: 2000, Now: func() time.Time { return day.AddDate(0, 0, 2) }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		p := s.payment(s.start, i)
		for _, v := range []any{s.apiPayment(p), s.liquidation(p)} {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(v); !bytes.Equal(got, want) {
				t.Fatalf("payment %d: mustJSON differs from encoding/json:\n%s\n%s", i, got, want)
			}
		}
	}
}

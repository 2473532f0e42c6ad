package sandbox

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"

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

// TestMemoMatchesGenerated: a payment read from the memo is the one
// generated afresh, injected breaks included, and is kept after its first read.
func TestMemoMatchesGenerated(t *testing.T) {
	day := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	s, err := New(Config{Seed: 3, Start: day, Days: 2, PaymentsPerDay: 500, BreaksPerDay: 40, Now: func() time.Time { return day.AddDate(0, 0, 3) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.memo) != 1000 {
		t.Fatalf("memo of %d payments, want 1000", len(s.memo))
	}
	edited := 0
	for d := s.start; d < s.start+s.days; d++ {
		for i := range s.n {
			p := s.payment(d, i)
			if again := s.payment(d, i); again != p {
				t.Fatalf("payment %d of day %d generated twice", i, d)
			}
			g := s.generate(d, i)
			if (p.edit != nil) != (g.edit != nil) || (p.ret != nil) != (g.ret != nil) {
				t.Fatalf("payment %d of day %d: memo edit %v ret %v, generated %v %v", i, d, p.edit != nil, p.ret != nil, g.edit != nil, g.ret != nil)
			}
			if p.edit != nil {
				edited++
			}
			for _, v := range [][2]any{{s.apiPayment(p), s.apiPayment(g)}, {s.liquidation(p), s.liquidation(g)}, {rowValues(s.reconRows(p)), rowValues(s.reconRows(g))}} {
				if got, want := mustJSON(v[0]), mustJSON(v[1]); !bytes.Equal(got, want) {
					t.Fatalf("payment %d of day %d: memo\n%s\ngenerated\n%s", i, d, got, want)
				}
			}
		}
	}
	if edited == 0 {
		t.Error("no payment carries an injected break: the test checks nothing of them")
	}
	if m := newMemo(3, memoPayments/2); m != nil {
		t.Errorf("memo of %d payments over the cap of %d", len(m), memoPayments)
	}
}

func rowValues(rows []row) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = r.v
	}
	return out
}

// TestFixedMatchesStringFixed: fixed writes what StringFixed writes, on its
// short path and off it (rounding, positive exponents, 18 digits and more).
func TestFixedMatchesStringFixed(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	cases := []decimal.Decimal{decimal.Zero, decimal.New(0, -2), decimal.New(-5, -2), decimal.New(5, 3),
		decimal.New(999_999_999_999_999_999, -2), decimal.New(-999_999_999_999_999_99, -6), decimal.RequireFromString("-0.000001"),
		decimal.RequireFromString("123456789012345678901234.5")}
	for range 20000 {
		v := r.Int64N(1 << uint(r.IntN(63)))
		if r.IntN(2) == 0 {
			v = -v
		}
		cases = append(cases, decimal.New(v, int32(r.IntN(12)-9)))
	}
	for _, d := range cases {
		for _, places := range []int32{0, 2, 6} {
			if got, want := fixed(d, places), d.StringFixed(places); got != want {
				t.Fatalf("fixed(%s, %d) = %s, want %s", d, places, got, want)
			}
		}
	}
}

// TestRangeFieldsOfPayment: the time a payments list reads off a payment
// without edits, to select and sort it without its record, is the record's.
func TestRangeFieldsOfPayment(t *testing.T) {
	day := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	s, err := New(Config{Seed: 4, Start: day, Days: 2, PaymentsPerDay: 500, BreaksPerDay: 40, Now: func() time.Time { return day.AddDate(0, 0, 3) }})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]int{}
	for d := s.start; d < s.start+s.days; d++ {
		for i := range s.n {
			p := s.payment(d, i)
			if unknown(p) || p.ret != nil || (p.edit != nil && p.edit.api != nil) {
				continue
			}
			a := s.apiPayment(p)
			for name, f := range rangeFields {
				if got, want := f.of(s, p), f.at(a); !got.Equal(want) {
					t.Fatalf("payment %s (%s): %s read off the payment %s, its record's %s", p.id, p.state, name, got, want)
				}
			}
			states[p.state]++
		}
	}
	for _, st := range []string{stateCompleted, stateFailed, stateExecuted} {
		if states[st] == 0 {
			t.Errorf("no %s payment without edits: the test checks none (%v)", st, states)
		}
	}
}

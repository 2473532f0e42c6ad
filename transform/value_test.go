package transform

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestParseAmount: every accepted amount is exact at 12 decimals; nothing is
// rounded, and what does not fit is refused.
func TestParseAmount(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" means refused
	}{
		{"5656.26", "5656.26"},
		{"-0.000001", "-0.000001"},
		{"+12", "12"},
		{"10949.516285", "10949.516285"},
		{".5", "0.5"},
		{"7.", "7"},
		{"0.123456789012", "0.123456789012"},
		{"0.1234567890120", "0.123456789012"}, // a 13th decimal that is zero is exact
		{"1.5e-7", "0.00000015"},              // JSON exponent
		{"2E+3", "2000"},                      // JSON exponent
		{"12345678901234567890123456", "12345678901234567890123456"}, // 26 integer digits: the most DECIMAL(38,12) holds
		{"0.1234567890123", ""},             // 13 decimals
		{"123456789012345678901234567", ""}, // 27 integer digits
		{"12,50", ""},
		{"1.2.3", ""},
		{"", ""},
		{"-", ""},
		{"NaN", ""},
		{"0x10", ""},
	} {
		n, err := parseAmount(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("parseAmount(%q) = %s, want refused", tc.in, n.ToString(amountScale))
			}
			continue
		}
		if err != nil {
			t.Errorf("parseAmount(%q): %v", tc.in, err)
			continue
		}
		got, _ := decimal.NewFromString(n.ToString(amountScale))
		if want := decimal.RequireFromString(tc.want); !got.Equal(want) {
			t.Errorf("parseAmount(%q) = %s, want %s", tc.in, got, want)
		}
	}
}

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // RFC 3339 in UTC; "" means refused
	}{
		{"2026-10-01T01:46:19.437Z", "2026-10-01T01:46:19.437Z"},
		{"2026-10-01T01:46:19Z", "2026-10-01T01:46:19Z"},
		{"2026-10-01T01:46:19+02:00", "2026-09-30T23:46:19Z"}, // the offset is applied
		{"2026-10-01T01:46:19.5", "2026-10-01T01:46:19.5Z"},   // no offset: UTC
		{"2026-10-01 01:46:19", "2026-10-01T01:46:19Z"},
		{"2026-13-45T99:00:00Z", ""},
		{"2026-10-01", ""},
		{"yesterday", ""},
	} {
		us, err := parseTime(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("parseTime(%q) accepted", tc.in)
			}
			continue
		}
		if got := microsTime(us).Format("2006-01-02T15:04:05.999999Z07:00"); err != nil || got != tc.want {
			t.Errorf("parseTime(%q) = %s (%v), want %s", tc.in, got, err, tc.want)
		}
	}
}

// TestCheck covers each kind's validation and its reason.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		col    Column
		in     value
		reason string // "" means valid
		want   string // the text kept, for text-like kinds
	}{
		{Column{Name: "c", Kind: Currency}, textValue(" usd "), "", "USD"},
		{Column{Name: "s", Kind: Enum, Values: paymentStates}, textValue("COMPLETED"), "", "COMPLETED"},
		{Column{Name: "s", Kind: Enum, Values: paymentStates}, textValue(" SETTLED "), "", "SETTLED"}, // an open list
		{Column{Name: "s", Kind: Enum, Values: paymentStates}, textValue("completed"), "", "completed"},
		{Column{Name: "id", Kind: Text, Required: true}, textValue("  "), "missing id", ""},
		{Column{Name: "id", Kind: Text, Required: true}, value{}, "missing id", ""},
		{Column{Name: "a", Kind: Amount}, value{s: `{"x":1}`, set: true, isJSON: true}, `bad value in a: {"x":1}`, ""},
		{Column{Name: "b", Kind: Bool}, textValue("yes"), "bad boolean in b: yes", ""},
		{Column{Name: "l", Kind: Labels}, value{s: `[{"label":"AMEND"},"X"]`, set: true, isJSON: true}, "", ""},
		{Column{Name: "l", Kind: Labels}, value{s: `[1]`, set: true, isJSON: true}, "bad labels in l", ""},
		{Column{Name: "t", Kind: Text}, value{s: `{"k":"v"}`, set: true, isJSON: true}, "", `{"k":"v"}`},
	} {
		var got typed
		reason := tc.col.check(tc.in, &got)
		if tc.reason == "" && reason != "" || tc.reason != "" && !strings.HasPrefix(reason, tc.reason) {
			t.Errorf("%s %q: reason %q, want %q", tc.col.Name, tc.in.s, reason, tc.reason)
		}
		if tc.want != "" && got.s != tc.want {
			t.Errorf("%s %q: kept %q, want %q", tc.col.Name, tc.in.s, got.s, tc.want)
		}
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"maxAmountPerTrade": "max_amount_per_trade", "total_xrp": "total_xrp", "fx": "fx"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseUTCMatchesTimeParse holds the fast path to time.Parse: on
// timestamps of every part's edge and on random bytes in their shape, it
// accepts only what RFC 3339 parsing accepts, with the same microseconds.
func TestParseUTCMatchesTimeParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	inputs := []string{"2026-02-29T00:00:00Z", "2024-02-29T23:59:59.999999999Z", "0000-01-01T00:00:00Z",
		"1969-12-31T23:59:59.5Z", "2026-10-01T01:46:19.Z", "2026-10-01T01:46:19.1234567890Z", "2026-10-01T24:00:00Z",
		"2026-10-01T01:46:60Z", "2026-04-31T00:00:00Z", "2026-10-01T01:46:19+00:00", "2026-10-01t01:46:19z", "+026-10-01T01:46:19Z"}
	const shape = "2006-01-02T15:04:05.000000000Z"
	for range 200000 {
		b := []byte(shape[:19])
		for i := range b {
			if b[i] >= '0' && b[i] <= '9' {
				b[i] = "0123456789"[rng.IntN(10)]
			}
		}
		if rng.IntN(2) == 0 { // a likely date
			copy(b, fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", 1900+rng.IntN(200), 1+rng.IntN(12), 1+rng.IntN(31),
				rng.IntN(24), rng.IntN(60), rng.IntN(60)))
		}
		s := string(b)
		if n := rng.IntN(11); n > 0 {
			s += "." + fmt.Sprint(rng.Int64())[:min(n-1, 9)]
		}
		s += "Z"
		if rng.IntN(20) == 0 { // a byte out of place
			i := rng.IntN(len(s))
			s = s[:i] + string("9:-.TZx "[rng.IntN(8)]) + s[i+1:]
		}
		inputs = append(inputs, s)
	}
	accepted := 0
	for _, s := range inputs {
		us, ok := parseUTC(s)
		tm, err := time.Parse(time.RFC3339Nano, s)
		if ok && (err != nil || us != tm.UnixMicro()) {
			t.Fatalf("parseUTC(%q) = %d; time.Parse: %v, %v", s, us, tm.UnixMicro(), err)
		}
		// what it may leave to time.Parse: an offset, another shape, a fraction past nanoseconds
		if !ok && err == nil && len(s) >= 20 && len(s) <= 30 && s[10] == 'T' && s[len(s)-1] == 'Z' && !strings.ContainsAny(s[:19], "+") {
			t.Errorf("parseUTC(%q) refused what time.Parse reads (%s)", s, tm)
		}
		if ok {
			accepted++
		}
	}
	if accepted < len(inputs)/3 {
		t.Errorf("parseUTC accepted %d of %d inputs; the generator should give more valid ones", accepted, len(inputs))
	}
}

package transform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/shopspring/decimal"
)

// value is one field as read: a CSV cell, or a JSON scalar's text. A JSON
// object or array is kept as its text with isJSON set.
type value struct {
	s      string
	set    bool // false: null, absent, or an empty CSV cell
	isJSON bool
}

func textValue(s string) value { return value{s: s, set: true} }

// jsonValue converts one JSON value: a string is unquoted, a number keeps its
// exact text, true and false are kept as text, null is unset.
func jsonValue(raw json.RawMessage) (value, error) {
	if !plainEnds(raw) {
		raw = bytes.TrimSpace(raw)
	}
	if len(raw) == 0 {
		return value{}, nil
	}
	switch raw[0] {
	case 'n':
		return value{}, nil
	case '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			return textValue(string(raw[1 : len(raw)-1])), nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return value{}, err
		}
		return textValue(s), nil
	case '{', '[':
		return value{s: string(raw), set: true, isJSON: true}, nil
	default:
		return textValue(string(raw)), nil
	}
}

// UnmarshalJSON lets a value be a field of a decoded struct.
func (v *value) UnmarshalJSON(b []byte) error {
	var err error
	*v, err = jsonValue(b)
	return err
}

// Scales of the decimal kinds: Amount (money) and Quantity (wallet
// quantities: 18 decimals occur on EVM chains, and DECIMAL(38,18) still
// holds 20 integer digits).
const (
	amountScale   = 12
	quantityScale = 18
)

var errNotDecimal = errors.New("not a decimal")

// parseAmount reads a decimal exactly into DECIMAL(38,12) units. More than
// 12 decimals, or more than 26 integer digits, is an error: nothing is rounded.
func parseAmount(s string) (decimal128.Num, error) { return parseDecimal(s, amountScale) }

// parseDecimal reads a decimal exactly into DECIMAL(38,scale) units. More
// than scale decimals, or more than 38-scale integer digits, is an error.
func parseDecimal(s string, scale int32) (decimal128.Num, error) {
	if n, ok := parsePlainAmount(s, int(scale)); ok {
		return n, nil
	}
	d, err := decimal.NewFromString(s) // exponents, and the errors
	if err != nil {
		return decimal128.Num{}, errNotDecimal
	}
	if d.Exponent() < -scale && !d.Equal(d.Truncate(scale)) {
		return decimal128.Num{}, fmt.Errorf("more than %d decimals", scale)
	}
	i := d.Shift(scale).BigInt()
	if i.CmpAbs(maxAmount) > 0 {
		return decimal128.Num{}, errors.New("out of range")
	}
	return decimal128.FromBigInt(i), nil
}

var maxAmount = new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil), big.NewInt(1))

// parsePlainAmount is the fast path for [+-]digits[.digits] at scale; ok
// is false for anything else, which parseDecimal then reads or rejects.
func parsePlainAmount(s string, scale int) (decimal128.Num, bool) {
	i, neg := 0, false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	var hi, lo uint64
	digits, frac, dot := 0, 0, false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' && !dot {
			dot = true
			continue
		}
		if c < '0' || c > '9' || digits == 37 || (dot && frac == scale) {
			return decimal128.Num{}, false
		}
		hi, lo = mul10add(hi, lo, uint64(c-'0'))
		digits++
		if dot {
			frac++
		}
	}
	if digits == 0 {
		return decimal128.Num{}, false
	}
	for ; frac < scale; frac++ {
		if digits == 38 {
			return decimal128.Num{}, false
		}
		hi, lo = mul10add(hi, lo, 0)
		digits++
	}
	n := decimal128.New(int64(hi), lo)
	if neg {
		n = n.Negate()
	}
	return n, true
}

// mul10add returns (hi,lo)*10 + d; callers keep it below 10^38.
func mul10add(hi, lo, d uint64) (uint64, uint64) {
	h, l := bits.Mul64(lo, 10)
	l, c := bits.Add64(l, d, 0)
	return hi*10 + h + c, l
}

// timeLayouts are the timestamp forms accepted; without an offset a time is UTC.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999"}

// parseTime reads an ISO 8601 timestamp into microseconds since the epoch, UTC.
func parseTime(s string) (int64, error) {
	if us, ok := parseUTC(s); ok {
		return us, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UnixMicro(), nil
		}
	}
	return 0, errors.New("not a timestamp")
}

// parseUTC reads the form the network's reports use,
// 2006-01-02T15:04:05[.fraction]Z, in about two thirds of time.Parse's
// time. It accepts only what time.Parse(time.RFC3339Nano) accepts, with the
// same result; ok is false for anything else, which parseTime then reads
// the general way.
func parseUTC(s string) (us int64, ok bool) {
	if len(s) < 20 || s[len(s)-1] != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	num := func(from, to int) int {
		n := 0
		for _, c := range []byte(s[from:to]) {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(0, 4), num(5, 7), num(8, 10)
	hour, minute, sec := num(11, 13), num(14, 16), num(17, 19)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return 0, false
	}
	micros := 0
	if frac := s[19 : len(s)-1]; frac != "" {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return 0, false
		}
		digits := frac[1:]
		f := num(20, 20+len(digits))
		if f < 0 {
			return 0, false
		}
		for range 9 - len(digits) { // to nanoseconds
			f *= 10
		}
		micros = f / 1000
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	if t.Day() != day {
		return 0, false // no such day in the month: time.Date moved it on
	}
	return t.Unix()*1_000_000 + int64(micros), true
}

// parseLabels reads a JSON array of strings or of {"label": ...} objects.
func parseLabels(s string) ([]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(s), &items); err != nil {
		return nil, errors.New("not an array")
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		var l string
		if err := json.Unmarshal(it, &l); err == nil {
			out = append(out, l)
			continue
		}
		var o struct {
			Label *string `json:"label"`
		}
		if err := json.Unmarshal(it, &o); err != nil || o.Label == nil {
			return nil, fmt.Errorf("item %s is neither a string nor a {\"label\"} object", it)
		}
		out = append(out, *o.Label)
	}
	return out, nil
}

// typed is one validated value, ready for its Arrow builder.
type typed struct {
	null   bool
	s      string
	amount decimal128.Num
	micros int64
	b      bool
	labels []string
}

// check validates a value against its column and writes it typed to *t, or
// returns the reason it is rejected (*t is then left as it was). It writes
// in place: returning the 80-byte typed cost the CSV ingest about 5% of its CPU.
func (c *Column) check(v value, t *typed) string {
	s := v.s
	if !v.isJSON {
		s = trimSpace(s)
	}
	if !v.set || (!v.isJSON && s == "") {
		if c.Required {
			return "missing " + c.Name
		}
		if c.Kind == Text && v.set {
			*t = typed{s: v.s}
			return ""
		}
		*t = typed{null: true}
		return ""
	}
	if v.isJSON && c.Kind != Text && c.Kind != Labels {
		return fmt.Sprintf("bad value in %s: %s", c.Name, clip(v.s))
	}
	switch c.Kind {
	case Amount:
		n, err := parseAmount(s)
		if err != nil {
			return fmt.Sprintf("bad decimal in %s: %s (%v)", c.Name, clip(v.s), err)
		}
		*t = typed{amount: n}
		return ""
	case Quantity:
		n, err := parseDecimal(s, quantityScale)
		if err != nil {
			return fmt.Sprintf("bad decimal in %s: %s (%v)", c.Name, clip(v.s), err)
		}
		*t = typed{amount: n}
		return ""
	case Time:
		us, err := parseTime(s)
		if err != nil {
			return fmt.Sprintf("bad timestamp in %s: %s", c.Name, clip(v.s))
		}
		*t = typed{micros: us}
		return ""
	case Currency:
		*t = typed{s: strings.ToUpper(s)}
		return ""
	case Enum: // an open list: an unknown value loads, and is counted (unknown_values)
		*t = typed{s: s}
		return ""
	case Bool:
		switch strings.ToLower(s) {
		case "true":
			*t = typed{b: true}
			return ""
		case "false":
			*t = typed{b: false}
			return ""
		}
		return fmt.Sprintf("bad boolean in %s: %s", c.Name, clip(v.s))
	case Labels:
		ls, err := parseLabels(v.s)
		if err != nil {
			return fmt.Sprintf("bad labels in %s: %v", c.Name, err)
		}
		*t = typed{labels: ls}
		return ""
	default:
		*t = typed{s: v.s}
		return ""
	}
}

// trimSpace is strings.TrimSpace, without its call for the common value
// that starts and ends with printable ASCII.
func trimSpace(s string) string {
	if plainEnds(s) {
		return s
	}
	return strings.TrimSpace(s)
}

// plainEnds reports whether s is empty or starts and ends with printable
// ASCII: trimming space would leave it as it is.
func plainEnds[T ~string | ~[]byte](s T) bool {
	n := len(s)
	return n == 0 || (s[0] > ' ' && s[0] < utf8.RuneSelf && s[n-1] > ' ' && s[n-1] < utf8.RuneSelf)
}

// invalidUTF8 returns the offset of the first byte of s that is not UTF-8,
// or -1. DuckDB refuses such text, so a row holding one is quarantined.
func invalidUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// escapeInvalid writes every byte of s that is not UTF-8 as \xNN, so the
// text of a rejected row can be kept in quarantine.
func escapeInvalid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			fmt.Fprintf(&sb, "\\x%02x", s[i])
			i++
			continue
		}
		sb.WriteString(s[i : i+n])
		i += n
	}
	return sb.String()
}

// clip shortens a value quoted in a reason.
func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

package transform

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// chunked reads its text in pieces of random sizes, as a file may come.
type chunked struct {
	s   string
	rng *rand.Rand
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+c.rng.IntN(7))], c.s)
	c.s = c.s[n:]
	return n, nil
}

// TestUTF8Watch holds the watch sound (the records it calls checked are
// UTF-8) and useful (a text of valid UTF-8, its characters cut across
// reads, is checked whole), on random texts.
func TestUTF8Watch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", ",", "\n", "é", "€", "😀", "\xff", "\xe2\x82", "\xf0\x9f", "\xbf", "\uFFFD"}
	for i := range 3000 {
		var sb strings.Builder
		for range rng.IntN(40) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := sb.String()
		if i%3 == 0 { // a third valid throughout
			text = strings.ToValidUTF8(text, "?")
		}
		w := newUTF8Watch(&chunked{s: text, rng: rng})
		got, err := io.ReadAll(w)
		if err != nil || string(got) != text {
			t.Fatalf("read %q, %v; want %q", got, err, text)
		}
		if utf8.ValidString(text) && !w.checked(int64(len(text))) {
			t.Fatalf("%q: valid text not checked whole (bad at %d)", text, w.bad)
		}
		for end := 1; end <= len(text); end++ { // where a record may end: after a newline, or at the end
			if (text[end-1] == '\n' || end == len(text)) && w.checked(int64(end)) && !utf8.ValidString(text[:end]) {
				t.Fatalf("%q: the first %d bytes called checked, but they are not UTF-8 (bad at %d)", text, end, w.bad)
			}
		}
	}
}

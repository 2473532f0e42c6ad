package transform

import (
	"io"
	"unicode/utf8"
)

// utf8Watch passes a file's bytes through, validating them as UTF-8 in the
// blocks they are read in, and keeps the offset of the first block that
// is not: a record that ends before it needs no check of its own cells,
// which in a file of short cells costs more than one pass over its bytes.
type utf8Watch struct {
	r    io.Reader
	off  int64  // bytes read so far
	bad  int64  // the bytes before it are whole, valid characters; -1: all read so far
	part []byte // the start of a character the last block ended inside
}

func newUTF8Watch(r io.Reader) *utf8Watch { return &utf8Watch{r: r, bad: -1} }

func (w *utf8Watch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if w.bad < 0 {
		from := w.off - int64(len(w.part)) // the bytes before are whole characters, valid
		if !w.valid(p[:n]) || (err == io.EOF && len(w.part) > 0) {
			w.bad = from
		}
	}
	w.off += int64(n)
	return n, err
}

// valid validates b after the character the previous block ended inside,
// keeping in part the start of a character b ends inside.
func (w *utf8Watch) valid(b []byte) bool {
	if len(w.part) > 0 {
		need := utf8.UTFMax - len(w.part)
		char := append(w.part, b[:min(need, len(b))]...)
		if !utf8.FullRune(char) {
			w.part = char
			return true
		}
		r, size := utf8.DecodeRune(char)
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		b = b[size-len(w.part):]
		w.part = w.part[:0]
	}
	// the last character may be cut at the block's end
	start := max(len(b)-utf8.UTFMax+1, 0)
	for i := len(b) - 1; i >= start; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				w.part = append(w.part[:0], b[i:]...)
				b = b[:i]
			}
			break
		}
	}
	return utf8.Valid(b)
}

// checked reports whether the bytes before end were found UTF-8.
func (w *utf8Watch) checked(end int64) bool { return w.bad < 0 || end <= w.bad }

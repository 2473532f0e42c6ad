package transform

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
)

// jsonArray calls fn for every element of the JSON array that is the whole
// of r (the file named file), numbered from 1. A syntax error makes the file
// unreadable: nothing after it can be read.
func jsonArray(r io.Reader, file string, fn func(n int64, raw json.RawMessage) error) error {
	dec := gojson.NewDecoder(r) // the bulk path: goccy needs about 1.6x less CPU than encoding/json
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return unreadable(file, errors.New("empty file: want a JSON array"))
	}
	if err != nil {
		return unreadable(file, err)
	}
	if d, ok := tok.(gojson.Delim); !ok || d != '[' {
		return unreadable(file, fmt.Errorf("want a JSON array, found %v", tok))
	}
	for n := int64(1); dec.More(); n++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return unreadable(file, fmt.Errorf("element %d: %w", n, err))
		}
		if err := fn(n, raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return unreadable(file, fmt.Errorf("end of array: %w", err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return unreadable(file, errors.New("data after the JSON array"))
	}
	return nil
}

// bom is the UTF-8 byte order mark some tools write at the start of a file.
var bom = []byte("\ufeff")

// readDoc reads a JSON document, without a UTF-8 byte order mark.
func readDoc(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	return bytes.TrimPrefix(b, bom), err
}

// object splits a JSON object into its fields; ok is false for any other
// JSON value.
func object(raw json.RawMessage) (fields, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	if fs, ok := scanObject(raw); ok { // no copies, on the common text
		return fs, true
	}
	var m map[string]json.RawMessage
	if err := gojson.Unmarshal(raw, &m); err != nil {
		return nil, false
	}
	fs := make(fields, 0, len(m))
	for k, v := range m {
		fs = append(fs, field{[]byte(k), v})
	}
	return fs, true
}

// elements are the elements of a JSON array, split by the scanner (no
// copies) or decoded; null or absent is none, and anything else an error.
func elements(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	var items []json.RawMessage
	if ok, _ := scanArray(raw, func(_ int, e json.RawMessage) error {
		items = append(items, e)
		return nil
	}); ok {
		return items, nil
	}
	return items, decodeJSON(raw, &items)
}

// shape says how the fields of a JSON object map onto a table: renames
// before Table.Canonical, and nested fields the caller flattens itself.
type shape struct {
	renames map[string]string
	skip    []string
}

// setFields puts the fields of a JSON object into the current row; unknown
// fields go to extra. A key given twice is read as decoding into a map
// reads it: its last value.
func (b *builder) setFields(fs fields, sh shape) error {
	// every field is set before an error is returned, so a rejected record
	// still has its key; errors are sorted, as they were in a map's random order
	var errs []string
	for j, f := range fs {
		if len(sh.skip) > 0 && contains(sh.skip, string(f.key)) {
			continue
		}
		i, ok := b.field(f.key)
		if len(sh.renames) > 0 {
			if name, renamed := sh.renames[string(f.key)]; renamed {
				i, ok = b.idx[name]
			}
		}
		v, err := jsonValue(f.raw)
		if err != nil {
			errs = append(errs, fmt.Sprintf("field %s: %v", f.key, err))
			continue
		}
		switch {
		case ok && b.seen[i] && fs[:j].has(string(f.key)):
			// a key given twice: read the object as a map holds it, the
			// last value of each key (the fields read so far are set again)
			b.unsetFields()
			return b.setFields(fs.lastOfEach(), sh)
		case ok && !v.set: // null is no value, like an empty CSV cell
		case ok && b.seen[i] && (b.vals[i].isJSON != v.isJSON || strings.TrimSpace(b.vals[i].s) != strings.TrimSpace(v.s)):
			// ripplenet_payment_id and network_payment_id, say; the values in
			// order, as the fields may come in any order
			x, y := clip(b.vals[i].s), clip(v.s)
			errs = append(errs, fmt.Sprintf("two fields give %s different values: %s and %s", b.t.Columns[i].Name, min(x, y), max(x, y)))
		case ok:
			b.vals[i], b.seen[i] = v, true
		case v.set: // like an empty CSV cell, null is no value
			b.setExtra(string(f.key), f.raw)
		case b.extra != nil:
			delete(b.extra, string(f.key)) // a key given twice, null the last time
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// jsonReportRows returns a producer of the elements of a JSON report: an
// array of row objects (after a UTF-8 byte order mark, if any), fields
// matched by name like a CSV header. An element that is not an object, is
// not UTF-8 or has a bad value is rejected with its number.
func jsonReportRows(path, file string) func(*builder) error {
	return func(b *builder) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r := bufio.NewReaderSize(f, 1<<20)
		if p, _ := r.Peek(len(bom)); bytes.Equal(p, bom) {
			r.Discard(len(bom))
		}
		return jsonArray(r, file, func(n int64, raw json.RawMessage) error {
			_, err := b.element(pos{file: file, n: n, path: pathAt("", int(n-1))}, raw, shape{}, nil)
			return err
		})
	}
}

// pos is where a JSON element is: its file, its number in its array (from
// 1) and its path.
type pos struct {
	file string
	n    int64
	path jsonPath
}

// jsonPath is the path of a JSON element in its file, at most four steps,
// written out ($.content[3].execution_results[0]) only for an element
// rejected: a path string built for every payment child was about 5% of
// the payments' parse.
type jsonPath struct {
	steps [4]pathStep
	n     int
}

// pathStep is a member name ("" for none; it may hold dots) followed by an
// index (-1 for none).
type pathStep struct {
	name  string
	index int
}

// pathAt is the path $.name[index].
func pathAt(name string, index int) jsonPath { return jsonPath{}.at(name, index) }

// at is p followed by .name[index].
func (p jsonPath) at(name string, index int) jsonPath {
	p.steps[p.n] = pathStep{name, index}
	p.n++
	return p
}

func (p jsonPath) String() string {
	s := "$"
	for _, st := range p.steps[:p.n] {
		if st.name != "" {
			s += "." + st.name
		}
		if st.index >= 0 {
			s += "[" + strconv.Itoa(st.index) + "]"
		}
	}
	return s
}

// element adds one JSON object as a row, with the fixed values (the keys of
// its parents), or rejects it with its position and text. It returns the
// object's fields, or nil when rejected.
func (b *builder) element(at pos, raw json.RawMessage, sh shape, fixed map[string]value) (fields, error) {
	return b.elementOf(at, listed{raw: raw}, sh, fixed)
}

// elementOf is element with the fields of the element when the caller
// has them (e.obj).
func (b *builder) elementOf(at pos, e listed, sh shape, fixed map[string]value) (fields, error) {
	setFixed := func() {
		for k, v := range fixed {
			b.set(k, v)
		}
	}
	var fs fields
	ok, err := b.add(at, e.raw, func() error {
		defer setFixed() // last: an object may not override its parents' keys, and a rejected one keeps them
		var isObject bool
		if fs, isObject = e.fields(); !isObject {
			return errors.New("not a JSON object")
		}
		return b.setFields(fs, sh)
	})
	if !ok {
		return nil, err
	}
	if fs == nil {
		fs = fields{}
	}
	return fs, err
}

// add fills the current row from one JSON element and appends it; when fill
// fails, the element is not UTF-8 or a value is bad, the element is rejected
// with its position and text, and ok is false.
func (b *builder) add(at pos, raw json.RawMessage, fill func() error) (ok bool, err error) {
	b.reset()
	reason := ""
	if ferr := fill(); ferr != nil {
		reason = ferr.Error()
	} else if !utf8.Valid(raw) {
		i := invalidUTF8(string(raw))
		reason = fmt.Sprintf("invalid UTF-8: byte 0x%02x at offset %d of the element", raw[i], i)
	} else if reason, err = b.commit(at.file, at.n); err != nil {
		return false, err
	}
	if reason == "" {
		return true, nil
	}
	q := quarantined{file: at.file, line: at.n, path: at.path.String(), reason: reason, raw: string(raw)}
	b.readable(&q)
	return false, b.reject(q)
}

// decodeJSON decodes a typed document with goccy/go-json (a fraction of
// encoding/json's CPU on the millions of records of a large run), and again
// with encoding/json when that fails, whose error says what is wrong.
func decodeJSON(raw []byte, v any) error {
	if gojson.Unmarshal(raw, v) == nil {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	return json.Unmarshal(raw, v)
}

// jsonProblem describes a decoding error without Go type names.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s is a JSON %s, not the expected %s", te.Field, te.Value, jsonKind(te.Type.Kind()))
	}
	return err.Error()
}

func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return k.String()
	}
}

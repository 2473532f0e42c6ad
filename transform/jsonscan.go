package transform

import (
	"encoding/json"
)

// A strict JSON scanner for the hot path of the server API payments: it
// splits an object or an array into the text of its members without
// copying them. It accepts only valid JSON, and objects whose keys are
// plain ASCII without escapes; anything else is left to goccy/go-json, so
// results are those of decoding into map[string]json.RawMessage or
// []json.RawMessage. Not tidwall/gjson: it validates, then splits a copy in
// a second pass, and measured no faster than goccy's path here
// (BenchmarkParse, payments: 106k ns/row against this scanner's 81k).

// field is a member of a JSON object as the scanner split it: its key's
// text (plain ASCII, without its quotes) and its value's text.
type field struct {
	key []byte
	raw json.RawMessage
}

// fields are the members of a JSON object in their order. An object may
// name a key twice: get, like decoding into a map, reads the last.
type fields []field

// get is the text of the last member named key; nil when none is.
func (fs fields) get(key string) json.RawMessage {
	for i := len(fs) - 1; i >= 0; i-- {
		if string(fs[i].key) == key {
			return fs[i].raw
		}
	}
	return nil
}

// has reports whether a member is named key.
func (fs fields) has(key string) bool {
	for _, f := range fs {
		if string(f.key) == key {
			return true
		}
	}
	return false
}

// lastOfEach is fs without the members whose key a later member names.
func (fs fields) lastOfEach() fields {
	out := make(fields, 0, len(fs))
	for i, f := range fs {
		if !fs[i+1:].has(string(f.key)) {
			out = append(out, f)
		}
	}
	return out
}

// toMap is fs as decoding into a map reads them (the last of a key).
func (fs fields) toMap() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(fs))
	for _, f := range fs {
		m[keyString(f.key)] = f.raw
	}
	return m
}

// listed is an element of a JSON array: fs its fields when the scanner read it
// as an object (obj).
type listed struct {
	raw json.RawMessage
	fs  fields
	obj bool
}

// fields are the element's fields; ok is false when it is not an object.
func (e listed) fields() (fields, bool) {
	if e.obj {
		return e.fs, true
	}
	return object(e.raw)
}

// scanObject splits a JSON object (no surrounding space) into its fields;
// ok is false when the text is not one this scanner reads.
func scanObject(raw []byte) (fields, bool) {
	if len(raw) < 2 || raw[0] != '{' {
		return nil, false
	}
	fs, end, ok := scanFieldsAt(raw, 0, 0, nil)
	return fs, ok && end == len(raw)
}

// scanFieldsAt splits the object at b[i], its values at depth, into its
// fields, and returns them and its end. The fields are appended to *arena
// (nil: a slice of their own), which a parser empties once it has read them.
func scanFieldsAt(b []byte, i, depth int, arena *[]field) (fields, int, bool) {
	if arena == nil {
		own := make([]field, 0, 16)
		arena = &own
	}
	from := len(*arena)
	end, ok := scanSeq(b, i+1, '}', func(j int) (int, bool) {
		key, start, end, ok := scanField(b, j, depth)
		if !ok || !plainKey(key) {
			return 0, false
		}
		*arena = append(*arena, field{key, json.RawMessage(b[start:end:end])})
		return end, true
	})
	to := len(*arena)
	return fields((*arena)[from:to:to]), end, ok
}

// keyNames holds the field names of the tables the loader fills and of
// the objects of a payment; keyString takes a key's string from it, so a
// map of fields does not allocate a string per known field.
var keyNames = map[string]string{}

func init() { // not a var's initializer: allTables reaches the scanner
	for _, t := range allTables() {
		for _, c := range t.Columns {
			keyNames[c.Name] = c.Name
		}
	}
	for _, fields := range paymentKnown {
		for _, f := range fields {
			keyNames[f] = f
		}
	}
}

// keyString is string(key), interned when it is a known field name.
func keyString(key []byte) string {
	if s, ok := keyNames[string(key)]; ok {
		return s
	}
	return string(key)
}

// fieldMaps hands out the field maps of the payments a parser reads, and
// holds the fields of their list elements, until the payment's rows are
// built: a new map per object was half of what parsing a payment
// allocated. A nil *fieldMaps makes new ones.
type fieldMaps struct {
	free, used []map[string]json.RawMessage
	arena      []field  // of the list elements (scanFieldsAt)
	items      []listed // the list elements (scanList)
}

func (f *fieldMaps) get() map[string]json.RawMessage {
	if f == nil {
		return make(map[string]json.RawMessage, 16)
	}
	var m map[string]json.RawMessage
	if n := len(f.free); n > 0 {
		m, f.free = f.free[n-1], f.free[:n-1]
	} else {
		m = make(map[string]json.RawMessage, 16)
	}
	f.used = append(f.used, m)
	return m
}

// recycle empties every map handed out since the last recycle, for get to
// hand out again, and the fields: the docs holding them must no longer be read.
func (f *fieldMaps) recycle() {
	for _, m := range f.used {
		clear(m)
	}
	f.free = append(f.free, f.used...)
	clear(f.used)
	f.used = f.used[:0]
	f.arena, f.items = f.arena[:0], f.items[:0]
}

// plainKey reports whether a key is ASCII without escapes: its text is then
// its value.
func plainKey(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// scanArray calls fn with the index and text of every element of a JSON
// array (no surrounding space), once the whole array is known valid; ok is
// false, and fn not called, when it is not.
func scanArray(raw []byte, fn func(i int, e json.RawMessage) error) (ok bool, err error) {
	if len(raw) < 2 || raw[0] != '[' {
		return false, nil
	}
	var spans [][2]int
	end, ok := scanSeq(raw, 1, ']', func(i int) (int, bool) {
		end, ok := scanValue(raw, i, 0)
		spans = append(spans, [2]int{i, end})
		return end, ok
	})
	if !ok || end != len(raw) {
		return false, nil
	}
	for n, s := range spans {
		if err := fn(n, json.RawMessage(raw[s[0]:s[1]:s[1]])); err != nil {
			return true, err
		}
	}
	return true, nil
}

// scanSeq reads the members of an object or an array, from b[i] (just after
// its opening bracket) to its close: item reads the member at b[j] and
// returns its end. It returns the end of the close.
func scanSeq(b []byte, i int, close byte, item func(j int) (int, bool)) (int, bool) {
	i = skipSpace(b, i)
	if i < len(b) && b[i] == close {
		return i + 1, true
	}
	for {
		end, ok := item(i)
		if !ok {
			return 0, false
		}
		i = skipSpace(b, end)
		switch {
		case i >= len(b):
			return 0, false
		case b[i] == close:
			return i + 1, true
		case b[i] != ',':
			return 0, false
		}
		i = skipSpace(b, i+1)
	}
}

// scanField reads `"key": value` at b[i]: the key's raw text (without its
// quotes) and the value's span.
func scanField(b []byte, i, depth int) (key []byte, start, end int, ok bool) {
	key, start, ok = scanKey(b, i)
	if !ok {
		return nil, 0, 0, false
	}
	end, ok = scanValue(b, start, depth)
	return key, start, end, ok
}

// scanKey reads `"key":` at b[i]: the key's raw text and where its value starts.
func scanKey(b []byte, i int) (key []byte, start int, ok bool) {
	kend, ok := scanString(b, i)
	if !ok {
		return nil, 0, false
	}
	j := skipSpace(b, kend)
	if j >= len(b) || b[j] != ':' {
		return nil, 0, false
	}
	return b[i+1 : kend-1], skipSpace(b, j+1), true
}

// maxScanDepth bounds the nesting the scanner follows; deeper text is left
// to goccy/go-json.
const maxScanDepth = 64

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanValue returns the end of the JSON value starting at b[i].
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > maxScanDepth {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{':
		return scanSeq(b, i+1, '}', func(j int) (int, bool) {
			_, _, end, ok := scanField(b, j, depth+1)
			return end, ok
		})
	case c == '[':
		return scanSeq(b, i+1, ']', func(j int) (int, bool) { return scanValue(b, j, depth+1) })
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	}
	return 0, false
}

func scanLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// stringStop marks the bytes that end a run of plain string text: the
// quote, the backslash and the control characters.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// scanString returns the end of the string at b[i]: valid escapes, no
// control characters (bytes of 0x80 and above are left as they are, as
// the decoders leave them in a json.RawMessage).
func scanString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for i++; i < len(b); i++ {
		for i < len(b) && !stringStop[b[i]] {
			i++
		}
		if i == len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			i++
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 {
					return 0, false
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// scanNumber returns the end of the number at b[i] (JSON grammar).
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return 0, false
		}
	}
	return i, true
}

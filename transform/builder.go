package transform

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// batchRows is the number of rows per Arrow record batch.
const batchRows = 1 << 13

var (
	amountArrow   = &arrow.Decimal128Type{Precision: 38, Scale: amountScale}
	quantityArrow = &arrow.Decimal128Type{Precision: 38, Scale: quantityScale}
	timeArrow     = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// stageSchema is the Arrow schema of a table's stage: its data columns, the
// extra fields as JSON text when the table keeps them, and the row's raw file
// and line.
func stageSchema(t *Table) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(t.Columns)+3)
	for _, c := range t.Columns {
		var typ arrow.DataType
		switch c.Kind {
		case Amount:
			typ = amountArrow
		case Quantity:
			typ = quantityArrow
		case Time:
			typ = timeArrow
		case Bool:
			typ = arrow.FixedWidthTypes.Boolean
		case Labels:
			typ = arrow.ListOf(arrow.BinaryTypes.String)
		default:
			typ = arrow.BinaryTypes.String
		}
		fields = append(fields, arrow.Field{Name: c.Name, Type: typ, Nullable: true})
	}
	if t.Extra {
		fields = append(fields, arrow.Field{Name: "extra", Type: arrow.BinaryTypes.String, Nullable: true})
	}
	fields = append(fields,
		arrow.Field{Name: "_file", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "_line", Type: arrow.PrimitiveTypes.Int64})
	return arrow.NewSchema(fields, nil)
}

// quarantined is a rejected record and where it was.
type quarantined struct {
	file string
	line int64
	path string // JSON path of the element; "" for CSV
	key  string // the record's key when it could be read
	// Best effort: the record's payment id and time (microseconds; 0 unknown).
	paymentID string
	at        int64
	reason    string
	raw       string
	// CSV: byte range of the record in its file, read into raw after the parse.
	start, end int64
}

// builder validates rows of one table and appends them to Arrow record
// batches, handing each full batch to flush; rejected rows are kept in bad.
type builder struct {
	t      *Table
	schema *arrow.Schema
	rb     *array.RecordBuilder
	flush  func(arrow.RecordBatch) error
	vals   []value
	seen   []bool         // columns set from the record's own fields
	idx    map[string]int // column name -> position
	fields map[string]int // field name as received -> position, or -1 (Table.Canonical, cached)
	extra  map[string]json.RawMessage
	typed  []typed
	rows   int
	data   []int            // string bytes of each field in the last batch (reserved for the next)
	loaded map[string]int64 // rows appended, by file
	bad    []quarantined
	nbad   map[string]int64 // rows rejected, by file
	// badBytes is the text of the rows in bad (maxRejected).
	badBytes int
}

func newBuilder(t *Table, flush func(arrow.RecordBatch) error) *builder {
	s := stageSchema(t)
	b := &builder{
		t: t, schema: s, rb: array.NewRecordBuilder(allocator(t), s), flush: flush,
		vals: make([]value, len(t.Columns)), seen: make([]bool, len(t.Columns)), typed: make([]typed, len(t.Columns)),
		loaded: map[string]int64{},
		nbad:   map[string]int64{}, idx: map[string]int{}, fields: map[string]int{},
	}
	for i, c := range t.Columns {
		b.idx[c.Name] = i
	}
	b.data = make([]int, len(s.Fields()))
	return b
}

// allocator is where a table's batches take their buffers: a report's
// from bufferPool (its ingest measured faster), the others' from Go's heap
// (a 1M day's whole load measured slower with them pooled: the pool's
// buffers count against the run's Go limit while a payment parse holds
// most of it; docs/performance.md).
func allocator(t *Table) memory.Allocator {
	if t.Prov == ByReport {
		return buffers
	}
	return memory.DefaultAllocator
}

// field returns the position of the column a received field name maps to.
func (b *builder) field(name []byte) (int, bool) {
	i, ok := b.fields[string(name)]
	if !ok {
		i = -1
		if c, known := b.t.Canonical(string(name)); known {
			i = b.idx[c]
		}
		b.fields[string(name)] = i
	}
	return i, i >= 0
}

// reset clears the current row.
func (b *builder) reset() {
	clear(b.vals)
	clear(b.seen)
	b.extra = nil
}

// unsetFields clears the columns of the current row set from its own
// fields (setFields).
func (b *builder) unsetFields() {
	for i, seen := range b.seen {
		if seen {
			b.vals[i], b.seen[i] = value{}, false
		}
	}
}

// set puts a field of the current row by column name; false when the table
// has no such column.
func (b *builder) set(name string, v value) bool {
	i, ok := b.idx[name]
	if ok {
		b.vals[i] = v
	}
	return ok
}

// setExtra keeps a field the table does not know (ignored when the table
// keeps no extra column).
func (b *builder) setExtra(name string, raw json.RawMessage) {
	if !b.t.Extra {
		return
	}
	if b.extra == nil {
		b.extra = map[string]json.RawMessage{}
	}
	b.extra[name] = raw
}

// commit validates the current row and appends it, or returns why it is
// rejected (several reasons joined by "; ").
func (b *builder) commit(file string, line int64) (string, error) {
	var reasons []string
	for i := range b.t.Columns {
		if why := b.t.Columns[i].check(b.vals[i], &b.typed[i]); why != "" {
			reasons = append(reasons, why)
		}
	}
	if len(reasons) > 0 {
		return strings.Join(reasons, "; "), nil
	}
	for i := range b.t.Columns {
		appendTyped(b.rb.Field(i), b.t.Columns[i].Kind, &b.typed[i])
	}
	n := len(b.t.Columns)
	if b.t.Extra {
		eb := b.rb.Field(n).(*array.StringBuilder)
		if len(b.extra) == 0 {
			eb.AppendNull()
		} else {
			eb.Append(extraJSON(b.extra))
		}
		n++
	}
	b.rb.Field(n).(*array.StringBuilder).Append(file)
	b.rb.Field(n + 1).(*array.Int64Builder).Append(line)
	b.loaded[file]++
	b.rows++
	if b.rows == batchRows {
		return "", b.finish()
	}
	return "", nil
}

// last is column col of the row last committed.
func (b *builder) last(col string) typed { return b.typed[b.idx[col]] }

// readable fills, from the current row, what a rejected record's key,
// payment id and time are when they can be read.
func (b *builder) readable(q *quarantined) {
	text := func(col string) string {
		if i := b.t.index(col); i >= 0 && b.vals[i].set && !b.vals[i].isJSON {
			return strings.TrimSpace(b.vals[i].s)
		}
		return ""
	}
	if len(b.t.Key) > 0 {
		q.key = text(b.t.Key[0])
	}
	q.paymentID = text(b.t.Payment)
	tc := b.t.WindowTime
	if tc == "" {
		tc = "created_at"
	}
	if us, err := parseTime(text(tc)); err == nil {
		q.at = us
	}
}

// maxRejected is how many rows, and how many MiB of their text, one
// builder quarantines before it takes its file for unreadable: past it the
// file is in a format recon cannot read, not a file with some bad rows.
// Every rejected row is held until its slice is stored: a 1M day's RECON
// report (4.4M rows) with every row malformed took the load to 12.7 GB
// resident, and a rejected payment's text is about 5 KB.
var maxRejected = struct{ rows, mib int }{100_000, 64}

// reject records a quarantined row; bytes that are not UTF-8 are kept as
// \xNN. Past maxRejected it returns an unreadable error for q's file.
func (b *builder) reject(q quarantined) error {
	size := len(q.raw) + int(q.end-q.start) + len(q.reason) + len(q.key) + len(q.path) // a CSV row's text is read later
	if len(b.bad) >= maxRejected.rows || b.badBytes+size > maxRejected.mib<<20 {
		first := q
		if len(b.bad) > 0 {
			first = b.bad[0]
		}
		where := first.path
		if where == "" {
			where = fmt.Sprintf("line %d", first.line)
		}
		return unreadable(q.file, fmt.Errorf("more than %d rows or %d MiB rejected, the first %s %s: %s",
			maxRejected.rows, maxRejected.mib, first.file, where, first.reason))
	}
	q.key, q.paymentID = strings.Clone(escapeInvalid(q.key)), strings.Clone(escapeInvalid(q.paymentID)) // not the whole record's text
	q.reason, q.raw = escapeInvalid(q.reason), escapeInvalid(q.raw)
	b.bad = append(b.bad, q)
	b.badBytes += size
	b.nbad[q.file]++
	return nil
}

// finish flushes the rows not yet handed over.
func (b *builder) finish() error {
	if b.rows == 0 {
		return nil
	}
	for i, f := range b.rb.Fields() { // what a batch held, the next reserves: its buffers are not regrown
		if sb, ok := f.(*array.StringBuilder); ok {
			b.data[i] = sb.DataLen()
		}
	}
	full := b.rows == batchRows
	b.rows = 0
	rec := b.rb.NewRecordBatch()
	if !full {
		return b.flush(rec)
	}
	b.rb.Reserve(batchRows)
	for i, f := range b.rb.Fields() {
		if sb, ok := f.(*array.StringBuilder); ok && b.data[i] > 0 {
			sb.ReserveData(b.data[i] + b.data[i]/8)
		}
	}
	return b.flush(rec)
}

// release frees the record builder.
func (b *builder) release() { b.rb.Release() }

func appendTyped(f array.Builder, k Kind, v *typed) {
	if v.null {
		f.AppendNull()
		return
	}
	switch k {
	case Amount, Quantity:
		f.(*array.Decimal128Builder).Append(v.amount)
	case Time:
		f.(*array.TimestampBuilder).Append(arrow.Timestamp(v.micros))
	case Bool:
		f.(*array.BooleanBuilder).Append(v.b)
	case Labels:
		lb := f.(*array.ListBuilder)
		lb.Append(true)
		sb := lb.ValueBuilder().(*array.StringBuilder)
		for _, l := range v.labels {
			sb.Append(l)
		}
	default:
		f.(*array.StringBuilder).Append(v.s)
	}
}

// extraJSON renders unknown fields as one JSON object, keys sorted.
func extraJSON(m map[string]json.RawMessage) string {
	keys := make([]string, 0, len(m))
	size := 2
	for k, v := range m {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.Grow(size)
	sb.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			sb.WriteByte(',')
		}
		if marshalsAsIs(k) { // what json.Marshal writes, without its reflection
			sb.WriteByte('"')
			sb.WriteString(k)
			sb.WriteByte('"')
		} else {
			q, _ := json.Marshal(k) // a string always marshals
			sb.Write(q)
		}
		sb.WriteByte(':')
		sb.Write(m[k])
	}
	sb.WriteByte('}')
	return sb.String()
}

// marshalsAsIs reports whether json.Marshal writes s as it is, in quotes:
// printable ASCII that it neither escapes nor HTML-escapes.
func marshalsAsIs(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// merge adds what another builder of the same table loaded and rejected.
func (b *builder) merge(o *builder) {
	for f, n := range o.loaded {
		b.loaded[f] += n
	}
	for f, n := range o.nbad {
		b.nbad[f] += n
	}
	b.bad = append(b.bad, o.bad...)
	b.badBytes += o.badBytes
}

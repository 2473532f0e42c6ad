package transform

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"
)

// csvRows returns a producer of the records of a CSV report: the header
// names the columns (Table.Canonical), unknown columns go to extra, and a
// record with the wrong number of fields, bad quoting or a bad value is
// rejected with its line (the header is line 1) and its exact text (bytes
// that are not UTF-8 written as \xNN). One goroutine splits the records;
// csvWorkers check them and build their batches, each with its own builder,
// so the batches reach b.flush in no fixed order (rows carry their line).
func csvRows(path, file string) func(*builder) error {
	return func(b *builder) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		watch := newUTF8Watch(f)
		r := csv.NewReader(bufio.NewReaderSize(watch, 1<<20))
		r.FieldsPerRecord = -1 // counted here, so a short record is rejected, not fatal
		r.ReuseRecord = true
		header, err := r.Read()
		if errors.Is(err, io.EOF) {
			return unreadable(file, errors.New("no header line"))
		}
		if pe := (*csv.ParseError)(nil); errors.As(err, &pe) {
			return unreadable(file, fmt.Errorf("header: %w", err))
		} else if err != nil {
			return fmt.Errorf("header: %w", err)
		}
		header = append([]string(nil), header...)
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
		index, err := headerIndex(b.t, header)
		if err != nil {
			return unreadable(file, err)
		}
		first := len(b.bad)
		workers := make([]*builder, csvWorkers)
		for w := range workers {
			workers[w] = newBuilder(b.t, b.flush)
			defer workers[w].release()
		}
		chunks := make(chan *csvChunk, 2*csvWorkers)
		free := make(chan *csvChunk, 3*csvWorkers) // chunks built, for the splitter to fill again
		// A cancelled load stops the workers through b.flush, which watches its context.
		g, gctx := errgroup.WithContext(context.Background())
		for _, wb := range workers {
			g.Go(func() error {
				for c := range chunks {
					if err := c.build(wb, file, header, index); err != nil {
						return err
					}
					select {
					case free <- c:
					default:
					}
				}
				return wb.finish()
			})
		}
		err = splitRecords(gctx, r, watch, b, file, chunks, free)
		close(chunks)
		if werr := g.Wait(); err == nil {
			err = werr
		}
		if err != nil {
			return err
		}
		for _, wb := range workers {
			b.merge(wb)
		}
		bad := b.bad[first:]
		sort.SliceStable(bad, func(i, j int) bool { return bad[i].line < bad[j].line })
		return readRaw(f, bad)
	}
}

// csvWorkers is how many goroutines check and build a CSV report's records:
// one a core, at least two, at most four (each holds a batch of its own; on
// two cores a third measured no faster).
var csvWorkers = min(max(2, runtime.GOMAXPROCS(0)), 4)

// csvChunkRecords is how many records go to a worker at a time.
const csvChunkRecords = 2048

// csvChunk is a run of records as split: their cells, one after another,
// and where each record's cells start, its line and its byte range.
type csvChunk struct {
	cells []string
	recs  []csvRecordAt
}

type csvRecordAt struct {
	from, line int
	start, end int64
	utf8       bool // its bytes are known to be UTF-8
}

// build checks each record of the chunk and appends it to b, or rejects it.
func (c *csvChunk) build(b *builder, file string, header []string, index []int) error {
	for i, at := range c.recs {
		to := len(c.cells)
		if i+1 < len(c.recs) {
			to = c.recs[i+1].from
		}
		b.reset()
		reason := csvRecord(b, header, index, c.cells[at.from:to], at.utf8)
		var err error
		if reason == "" {
			if reason, err = b.commit(file, int64(at.line)); err != nil {
				return err
			}
		}
		if reason != "" {
			q := quarantined{file: file, line: int64(at.line), reason: reason, start: at.start, end: at.end}
			b.readable(&q)
			if err := b.reject(q); err != nil {
				return err
			}
		}
	}
	return nil
}

// splitRecords reads the records after the header into chunks, refilling
// those it gets back on free; a record with bad quoting is rejected into b
// here. watch is the reader under r.
func splitRecords(ctx context.Context, r *csv.Reader, watch *utf8Watch, b *builder, file string,
	chunks chan<- *csvChunk, free <-chan *csvChunk) error {
	c := &csvChunk{}
	send := func() error {
		if len(c.recs) == 0 {
			return nil
		}
		select {
		case chunks <- c:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		select {
		case c = <-free: // its cells are overwritten as it fills
			c.cells, c.recs = c.cells[:0], c.recs[:0]
		default:
			c = &csvChunk{cells: make([]string, 0, cap(c.cells)), recs: make([]csvRecordAt, 0, csvChunkRecords)}
		}
		return nil
	}
	for {
		start := r.InputOffset()
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return send()
		}
		end := r.InputOffset()
		if pe := (*csv.ParseError)(nil); errors.As(err, &pe) {
			if err := b.reject(quarantined{file: file, line: int64(pe.StartLine), reason: "bad quoting: " + pe.Err.Error(), start: start, end: end}); err != nil {
				return err
			}
			continue
		} else if err != nil {
			return err
		}
		line, _ := r.FieldPos(0)
		c.recs = append(c.recs, csvRecordAt{from: len(c.cells), line: line, start: start, end: end, utf8: watch.checked(end)})
		c.cells = append(c.cells, rec...)
		if len(c.recs) == csvChunkRecords {
			if err := send(); err != nil {
				return err
			}
		}
	}
}

// csvRecord puts the cells of a record into the current row (unknown
// columns to extra) and returns why the record is rejected before its
// values are checked: a wrong number of fields, a cell that is not UTF-8, or
// two header fields of one column (network_payment_id and
// ripplenet_payment_id) with different values. The cells it could read stay
// in the row, so a rejected record keeps its key when it has one. isUTF8:
// the record's bytes were found UTF-8 already (utf8Watch).
func csvRecord(b *builder, header []string, index []int, rec []string, isUTF8 bool) string {
	var reasons []string
	if len(rec) != len(header) {
		what := "too few"
		if len(rec) > len(header) {
			what = "too many"
		}
		reasons = append(reasons, fmt.Sprintf("%s columns: %d, header has %d", what, len(rec), len(header)))
	}
	for i, v := range rec[:min(len(rec), len(header))] {
		if !isUTF8 {
			if at := invalidUTF8(v); at >= 0 {
				reasons = append(reasons, fmt.Sprintf("invalid UTF-8 in %s: byte 0x%02x at offset %d", header[i], v[at], at))
				continue
			}
		}
		j := index[i]
		switch {
		case v == "": // an empty cell is null
		case j >= 0 && b.seen[j] && strings.TrimSpace(b.vals[j].s) != strings.TrimSpace(v):
			reasons = append(reasons, fmt.Sprintf("two fields give %s different values: %s and %s",
				b.t.Columns[j].Name, clip(b.vals[j].s), clip(v)))
		case j >= 0:
			b.vals[j], b.seen[j] = textValue(v), true
		default:
			q, _ := json.Marshal(v) // a string always marshals
			b.setExtra(header[i], q)
		}
	}
	return strings.Join(reasons, "; ")
}

// headerIndex maps each header field to its column's position, or -1 for a
// field the table does not know; a required column missing is an error. A
// column may be named twice (network_payment_id and ripplenet_payment_id):
// each record must then give it one value (csvRecord).
func headerIndex(t *Table, header []string) ([]int, error) {
	index := make([]int, len(header))
	seen := map[string]bool{}
	for i, h := range header {
		name, ok := t.Canonical(h)
		index[i] = -1
		if !ok {
			continue
		}
		seen[name] = true
		index[i] = t.index(name)
	}
	for _, c := range t.Columns {
		if c.Required && !seen[c.Name] {
			return nil, fmt.Errorf("required column %s missing from the header", c.Name)
		}
	}
	return index, nil
}

// readRaw fills the raw text of rejected CSV records from their byte ranges.
func readRaw(f *os.File, bad []quarantined) error {
	for i := range bad {
		q := &bad[i]
		buf := make([]byte, q.end-q.start)
		if _, err := f.ReadAt(buf, q.start); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read line %d: %w", q.line, err)
		}
		q.raw = escapeInvalid(strings.Trim(string(buf), "\r\n"))
	}
	return nil
}

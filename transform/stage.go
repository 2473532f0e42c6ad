package transform

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// errStopped tells a producer that DuckDB stopped reading its batches.
var errStopped = errors.New("stage reader stopped")

// stream is an array.RecordReader fed by a producer goroutine, so parsing
// in Go and loading in DuckDB overlap. DuckDB calls Next from one thread at a time.
type stream struct {
	schema *arrow.Schema
	ch     chan arrow.RecordBatch
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	refs   atomic.Int64
	cur    arrow.RecordBatch
	ended  bool  // Next saw ch closed
	err    error // written by the producer before ch is closed
}

func (s *stream) Retain()                        { s.refs.Add(1) }
func (s *stream) Schema() *arrow.Schema          { return s.schema }
func (s *stream) RecordBatch() arrow.RecordBatch { return s.cur }

// Record is RecordBatch (the interface still requires it).
func (s *stream) Record() arrow.RecordBatch { return s.cur }

func (s *stream) Release() {
	if s.refs.Add(-1) == 0 {
		s.once.Do(func() { close(s.stop) })
		if s.cur != nil {
			s.cur.Release()
			s.cur = nil
		}
	}
}

func (s *stream) Next() bool {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	rec, ok := <-s.ch
	if !ok {
		s.ended = true
		return false
	}
	s.cur = rec
	return true
}

func (s *stream) Err() error {
	if !s.ended || errors.Is(s.err, errStopped) {
		return nil
	}
	return s.err
}

// stageRows creates the temporary table name from the rows produce adds to
// b, streamed batch by batch; b's rejected rows are complete on return.
func stageRows(ctx context.Context, conn *sql.Conn, name string, b *builder, produce func(*builder) error) error {
	return streamRows(ctx, conn, name, b, produce, fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %[1]s AS SELECT * FROM %[1]s_arrow", name))
}

// streamRows runs query, which reads the rows produce adds to b from the
// view name_arrow, streamed batch by batch; b's rejected rows are complete
// on return.
func streamRows(ctx context.Context, conn *sql.Conn, name string, b *builder, produce func(*builder) error,
	query string, args ...sql.NamedArg) error {
	s := &stream{schema: b.schema, ch: make(chan arrow.RecordBatch, 2), stop: make(chan struct{}), done: make(chan struct{})}
	s.refs.Store(1)
	b.flush = func(rec arrow.RecordBatch) error {
		select {
		case s.ch <- rec:
			return nil
		case <-s.stop:
			rec.Release()
			return errStopped
		case <-ctx.Done():
			rec.Release()
			return ctx.Err()
		}
	}
	go func() {
		err := produce(b)
		if err == nil {
			err = b.finish()
		}
		s.err = err
		close(s.ch)
		close(s.done)
	}()
	execErr := execOnReader(ctx, conn, name, s, query, args...)
	s.Release()
	<-s.done
	if s.err != nil && !errors.Is(s.err, errStopped) {
		return s.err
	}
	return execErr
}

// stageRecords creates the temporary table name from records already built.
func stageRecords(ctx context.Context, conn *sql.Conn, name string, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	return appendRecords(ctx, conn, name, schema, recs, fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %[1]s AS SELECT * FROM %[1]s_arrow", name))
}

// appendRecords runs query on recs, registered as the view name_arrow.
func appendRecords(ctx context.Context, conn *sql.Conn, name string, schema *arrow.Schema, recs []arrow.RecordBatch,
	query string, args ...sql.NamedArg) error {
	r, err := array.NewRecordReader(schema, recs)
	if err != nil {
		return err
	}
	defer r.Release()
	return execOnReader(ctx, conn, name, r, query, args...)
}

// execOnReader registers r with the driver as the view name_arrow and runs
// query, which reads it in bulk.
func execOnReader(ctx context.Context, conn *sql.Conn, name string, r array.RecordReader, query string, args ...sql.NamedArg) error {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Name: a.Name, Ordinal: i + 1, Value: a.Value}
	}
	err := conn.Raw(func(dc any) error {
		ar, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		release, err := ar.RegisterView(r, name+"_arrow")
		if err != nil {
			return err
		}
		defer release()
		_, err = dc.(driver.ExecerContext).ExecContext(ctx, query, nv)
		return err
	})
	if err != nil {
		return fmt.Errorf("stage %s: %w", name, err)
	}
	return nil
}

var filesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	{Name: "source", Type: arrow.BinaryTypes.String},
	{Name: "source_file", Type: arrow.BinaryTypes.String},
	{Name: "request", Type: arrow.BinaryTypes.String},
	{Name: "sha256", Type: arrow.BinaryTypes.String},
	{Name: "size_bytes", Type: arrow.PrimitiveTypes.Int64},
	{Name: "fetched_at", Type: timeArrow, Nullable: true},
	{Name: "window_from", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "window_to", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "account", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "report_id", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "rows_loaded", Type: arrow.PrimitiveTypes.Int64},
	{Name: "rows_quarantined", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// stageFiles creates the temporary table stage_files: one row per raw file
// of a slice, in order (n), with what source_files records of it, so a
// slice of many files (liquidations, pages) is recorded in one statement.
func stageFiles(ctx context.Context, conn *sql.Conn, stats []FileStats) error {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, filesSchema)
	defer rb.Release()
	str := func(i int, s string) {
		b := rb.Field(i).(*array.StringBuilder)
		if s == "" {
			b.AppendNull()
		} else {
			b.Append(s)
		}
	}
	for n, fs := range stats {
		f := fs.File
		rb.Field(0).(*array.Int64Builder).Append(int64(n))
		rb.Field(1).(*array.StringBuilder).Append(f.Source)
		rb.Field(2).(*array.StringBuilder).Append(f.Path)
		rb.Field(3).(*array.StringBuilder).Append(f.Request)
		rb.Field(4).(*array.StringBuilder).Append(f.SHA256)
		rb.Field(5).(*array.Int64Builder).Append(f.Size)
		if f.FetchedAt.IsZero() {
			rb.Field(6).AppendNull()
		} else {
			rb.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(f.FetchedAt.UnixMicro()))
		}
		for i, d := range []time.Time{f.Window.From, f.Window.To} {
			if f.Window.From.IsZero() {
				rb.Field(7 + i).AppendNull()
			} else {
				rb.Field(7 + i).(*array.Date32Builder).Append(arrow.Date32FromTime(d))
			}
		}
		str(9, f.Account)
		str(10, f.ReportID)
		rb.Field(11).(*array.Int64Builder).Append(fs.Rows)
		rb.Field(12).(*array.Int64Builder).Append(fs.Quarantined)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	return stageRecords(ctx, conn, "stage_files", filesSchema, []arrow.RecordBatch{rec})
}

var quarantineSchema = arrow.NewSchema([]arrow.Field{
	{Name: "_file", Type: arrow.BinaryTypes.String},
	{Name: "_line", Type: arrow.PrimitiveTypes.Int64},
	{Name: "path", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "record_key", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "payment_id", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "row_time", Type: timeArrow, Nullable: true},
	{Name: "reason", Type: arrow.BinaryTypes.String},
	{Name: "raw", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// stageQuarantine creates the temporary table stage_quarantine from rejected rows.
func stageQuarantine(ctx context.Context, conn *sql.Conn, bad []quarantined) error {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, quarantineSchema)
	defer rb.Release()
	opt := func(f int, s string) {
		sb := rb.Field(f).(*array.StringBuilder)
		if s == "" {
			sb.AppendNull()
		} else {
			sb.Append(s)
		}
	}
	for _, q := range bad {
		rb.Field(0).(*array.StringBuilder).Append(q.file)
		rb.Field(1).(*array.Int64Builder).Append(q.line)
		opt(2, q.path)
		opt(3, q.key)
		opt(4, q.paymentID)
		if q.at == 0 {
			rb.Field(5).AppendNull()
		} else {
			rb.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(q.at))
		}
		rb.Field(6).(*array.StringBuilder).Append(q.reason)
		opt(7, q.raw)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	return stageRecords(ctx, conn, "stage_quarantine", quarantineSchema, []arrow.RecordBatch{rec})
}

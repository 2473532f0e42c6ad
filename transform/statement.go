package transform

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"

	"recon/extract"
)

// scalar keeps a JSON string or number as its text; null leaves it unset.
type scalar struct {
	s   string
	set bool
}

func (v *scalar) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*v = scalar{}
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = scalar{s: s, set: true}
	default:
		*v = scalar{s: string(b), set: true}
	}
	return nil
}

type statementPage struct {
	AccountName    scalar `json:"account_name"`
	Currency       scalar `json:"currency"`
	OpeningBalance scalar `json:"opening_balance"`
	ClosingBalance scalar `json:"closing_balance"`
	StartDatetime  scalar `json:"start_datetime"`
	EndDatetime    scalar `json:"end_datetime"`
	GeneratedAt    scalar `json:"generated_at"`
	Transactions   struct {
		Content       []json.RawMessage `json:"content"`
		TotalElements int64             `json:"total_elements"`
	} `json:"transactions"`
}

type statementEntry struct {
	TransactionID           scalar `json:"transaction_id"`
	TransactionType         scalar `json:"transaction_type"`
	TransactionState        scalar `json:"transaction_state"`
	BalanceChange           scalar `json:"balance_change"`
	BalanceResult           scalar `json:"balance_result"`
	CreatedAt               scalar `json:"created_at"`
	EndToEndID              scalar `json:"end_to_end_id"`
	InternalID              scalar `json:"internal_id"`
	VenueID                 scalar `json:"venue_id"`
	TransactionHash         scalar `json:"transaction_hash"`
	ReturnsPaymentWithID    scalar `json:"returns_payment_with_id"`
	ReturnedByPaymentWithID scalar `json:"returned_by_payment_with_id"`
	SenderAddress           scalar `json:"sender_address"`
	ReceiverAddress         scalar `json:"receiver_address"`
}

var statementTypes = []string{"PAYMENT", "TRANSFER", "EXCHANGE_TRANSFER"}

var (
	amountArrow = &arrow.Decimal128Type{Precision: 38, Scale: 12}
	timeArrow   = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	entrySchema = arrow.NewSchema([]arrow.Field{
		{Name: "account", Type: arrow.BinaryTypes.String},
		{Name: "transaction_id", Type: arrow.BinaryTypes.String},
		{Name: "transaction_type", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "transaction_state", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "balance_change", Type: amountArrow, Nullable: true},
		{Name: "balance_result", Type: amountArrow, Nullable: true},
		{Name: "created_at", Type: timeArrow, Nullable: true},
		{Name: "end_to_end_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "internal_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "venue_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "transaction_hash", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "returns_payment_with_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "returned_by_payment_with_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "sender_address", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "receiver_address", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "source_file", Type: arrow.BinaryTypes.String},
		{Name: "source_line", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
)

type quarantined struct {
	file   string
	line   int64
	reason string
	raw    string
}

// parseAmount accepts a plain decimal with at most 12 decimals.
func parseAmount(v scalar) (decimal128.Num, bool, error) {
	if !v.set {
		return decimal128.Num{}, false, nil
	}
	d, err := decimal.NewFromString(v.s)
	if err != nil {
		return decimal128.Num{}, false, fmt.Errorf("bad decimal %q", v.s)
	}
	if d.Exponent() < -12 {
		return decimal128.Num{}, false, fmt.Errorf("decimal %q has more than 12 decimals", v.s)
	}
	return decimal128.FromBigInt(d.Shift(12).BigInt()), true, nil
}

func parseTime(v scalar) (time.Time, bool, error) {
	if !v.set {
		return time.Time{}, false, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v.s)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("bad timestamp %q", v.s)
	}
	return t.UTC(), true, nil
}

// entryBuilder appends statement entries to an Arrow record.
type entryBuilder struct {
	b *array.RecordBuilder
}

func (e entryBuilder) str(i int, v scalar) {
	sb := e.b.Field(i).(*array.StringBuilder)
	if v.set {
		sb.Append(v.s)
	} else {
		sb.AppendNull()
	}
}

// add validates one entry and appends it, or returns why it is quarantined.
func (e entryBuilder) add(account, file string, line int64, raw json.RawMessage) error {
	var en statementEntry
	if err := json.Unmarshal(raw, &en); err != nil {
		return fmt.Errorf("not a statement entry: %v", err)
	}
	if !en.TransactionID.set || strings.TrimSpace(en.TransactionID.s) == "" {
		return fmt.Errorf("missing transaction_id")
	}
	if en.TransactionType.set && !contains(statementTypes, en.TransactionType.s) {
		return fmt.Errorf("unknown transaction_type: %s", en.TransactionType.s)
	}
	change, okChange, err := parseAmount(en.BalanceChange)
	if err != nil {
		return fmt.Errorf("balance_change: %w", err)
	}
	result, okResult, err := parseAmount(en.BalanceResult)
	if err != nil {
		return fmt.Errorf("balance_result: %w", err)
	}
	created, okCreated, err := parseTime(en.CreatedAt)
	if err != nil {
		return fmt.Errorf("created_at: %w", err)
	}
	e.b.Field(0).(*array.StringBuilder).Append(account)
	e.str(1, en.TransactionID)
	e.str(2, en.TransactionType)
	e.str(3, en.TransactionState)
	for i, d := range []struct {
		n  decimal128.Num
		ok bool
	}{{change, okChange}, {result, okResult}} {
		db := e.b.Field(4 + i).(*array.Decimal128Builder)
		if d.ok {
			db.Append(d.n)
		} else {
			db.AppendNull()
		}
	}
	tb := e.b.Field(6).(*array.TimestampBuilder)
	if okCreated {
		tb.Append(arrow.Timestamp(created.UnixMicro()))
	} else {
		tb.AppendNull()
	}
	for i, v := range []scalar{en.EndToEndID, en.InternalID, en.VenueID, en.TransactionHash,
		en.ReturnsPaymentWithID, en.ReturnedByPaymentWithID, en.SenderAddress, en.ReceiverAddress} {
		e.str(7+i, v)
	}
	e.b.Field(15).(*array.StringBuilder).Append(file)
	e.b.Field(16).(*array.Int64Builder).Append(line)
	return nil
}

func contains(vs []string, s string) bool {
	for _, v := range vs {
		if v == s {
			return true
		}
	}
	return false
}

// loadStatement replaces one account's statement slice (all pages of one window).
func (l *Loader) loadStatement(ctx context.Context, conn *sql.Conn, pages []extract.RawFile) (FileStats, error) {
	first := pages[0]
	st := FileStats{File: first}
	b := array.NewRecordBuilder(memory.DefaultAllocator, entrySchema)
	defer b.Release()
	eb := entryBuilder{b}
	var head statementPage
	var bad []quarantined
	var total int64
	for i, p := range pages {
		body, err := os.ReadFile(filepath.Join(l.dir, filepath.FromSlash(p.Path)))
		if err != nil {
			return st, err
		}
		var page statementPage
		if err := json.Unmarshal(body, &page); err != nil {
			return st, fmt.Errorf("statement page %s: %w", p.Path, err)
		}
		if i == 0 {
			head = page
		}
		for j, raw := range page.Transactions.Content {
			if err := eb.add(first.Account, p.Path, int64(j+1), raw); err != nil {
				bad = append(bad, quarantined{file: p.Path, line: int64(j + 1), reason: err.Error(), raw: string(raw)})
			}
			total++
		}
	}
	for name, v := range map[string]scalar{"opening_balance": head.OpeningBalance, "closing_balance": head.ClosingBalance} {
		if _, _, err := parseAmount(v); err != nil {
			return st, fmt.Errorf("statement %s %s: %w", first.Path, name, err)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := stageArrow(ctx, conn, "stage_entries", rec); err != nil {
		return st, fmt.Errorf("stage statement %s: %w", first.Path, err)
	}

	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return st, err
	}
	defer tx.Rollback()
	w := first.Window
	args := []any{sql.Named("account", first.Account), sql.Named("start", w.Start()), sql.Named("end", w.End()),
		sql.Named("from", w.From), sql.Named("to", w.To), sql.Named("source", extract.SourceStatement)}
	for _, q := range []string{
		`DELETE FROM statement_entries WHERE account = $account AND ((created_at >= $start AND created_at < $end)
			OR transaction_id IN (SELECT transaction_id FROM stage_entries))`,
		`INSERT INTO statement_entries SELECT * FROM stage_entries ORDER BY source_file, source_line`,
		deleteQuarantineSQL,
	} {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return st, fmt.Errorf("load statement %s: %w", first.Path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO statements VALUES ($account, $name, upper($currency),
		CAST($opening AS DECIMAL(38,12)), CAST($closing AS DECIMAL(38,12)), $start, $end,
		CAST($generated AS TIMESTAMPTZ), $entries, $file)`,
		sql.Named("account", first.Account), sql.Named("name", nullable(head.AccountName)),
		sql.Named("currency", nullable(head.Currency)), sql.Named("opening", nullable(head.OpeningBalance)),
		sql.Named("closing", nullable(head.ClosingBalance)), sql.Named("start", w.Start()), sql.Named("end", w.End()),
		sql.Named("generated", nullable(head.GeneratedAt)), sql.Named("entries", total), sql.Named("file", first.Path)); err != nil {
		return st, fmt.Errorf("record statement %s: %w", first.Path, err)
	}
	for _, q := range bad {
		if _, err := tx.ExecContext(ctx, `INSERT INTO quarantine (source, account, window_from, window_to, source_file,
			report_id, line, reason, raw, run_id) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)`,
			extract.SourceStatement, first.Account, w.From, w.To, q.file, q.line, q.reason, q.raw, l.runID); err != nil {
			return st, fmt.Errorf("quarantine statement row %s:%d: %w", q.file, q.line, err)
		}
	}
	st.Rows, st.Quarantined = rec.NumRows(), int64(len(bad))
	return st, tx.Commit()
}

func nullable(v scalar) any {
	if !v.set {
		return nil
	}
	return v.s
}

// stageArrow copies an Arrow record into a temporary table of the connection.
func stageArrow(ctx context.Context, conn *sql.Conn, table string, rec arrow.RecordBatch) error {
	reader, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		return err
	}
	defer reader.Release()
	return conn.Raw(func(dc any) error {
		ar, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		release, err := ar.RegisterView(reader, table+"_arrow")
		if err != nil {
			return err
		}
		defer release()
		_, err = dc.(driver.ExecerContext).ExecContext(ctx,
			fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS SELECT * FROM %s_arrow", table, table), nil)
		return err
	})
}

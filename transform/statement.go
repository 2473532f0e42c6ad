package transform

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/shopspring/decimal"

	"recon/extract/raw"
)

// statementPage is one page of GET /statement/{account}.
type statementPage struct {
	AccountName    value `json:"account_name"`
	Currency       value `json:"currency"`
	OpeningBalance value `json:"opening_balance"`
	ClosingBalance value `json:"closing_balance"`
	StartDatetime  value `json:"start_datetime"`
	EndDatetime    value `json:"end_datetime"`
	GeneratedAt    value `json:"generated_at"`
	Transactions   struct {
		Content       []json.RawMessage `json:"content"`
		TotalElements int64             `json:"total_elements"`
	} `json:"transactions"`
}

func readStatementPage(path, file string) (statementPage, error) {
	var p statementPage
	b, err := readDoc(path)
	if err != nil {
		return p, err
	}
	if err := decodeJSON(b, &p); err != nil {
		return p, unreadable(file, fmt.Errorf("not a statement page: %w", err))
	}
	return p, nil
}

// loadStatement replaces one account's statement slice (all pages of one
// window): its header, superseding the headers of windows it covers, and the
// entries created in the window or brought again.
func (l *Loader) loadStatement(ctx context.Context, conn *sql.Conn, pages []raw.File) ([]FileStats, error) {
	first := pages[0]
	head, err := readStatementPage(l.path(first), first.Path)
	if err != nil {
		return nil, fmt.Errorf("statement %s: %w", first.Path, err)
	}
	opening, err := amountArg(head.OpeningBalance)
	if err != nil {
		return nil, fmt.Errorf("statement %s opening_balance: %w", first.Path, unreadable(first.Path, err))
	}
	closing, err := amountArg(head.ClosingBalance)
	if err != nil {
		return nil, fmt.Errorf("statement %s closing_balance: %w", first.Path, unreadable(first.Path, err))
	}
	generated, err := timeArg(head.GeneratedAt)
	if err != nil {
		return nil, fmt.Errorf("statement %s generated_at: %w", first.Path, unreadable(first.Path, err))
	}
	account := map[string]value{"account": textValue(first.Account)}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// The entries go straight into their table; the rows there before
	// (rowid up to $last) that they replace are deleted after.
	last, err := lastRowid(ctx, tx, &StatementEntries)
	if err != nil {
		return nil, fmt.Errorf("load statement %s: %w", first.Path, err)
	}
	var total int64
	b := newBuilder(&StatementEntries, nil)
	defer b.release()
	err = streamRows(ctx, conn, "stage", b, func(b *builder) error {
		for _, p := range pages {
			page := head
			if p.Path != first.Path {
				if page, err = readStatementPage(l.path(p), p.Path); err != nil {
					return fmt.Errorf("statement %s: %w", p.Path, err)
				}
			}
			for j, raw := range page.Transactions.Content {
				at := pos{file: p.Path, n: int64(j + 1), path: pathAt("transactions.content", j)}
				if _, err := b.element(at, raw, shape{}, account); err != nil {
					return err
				}
				total++
			}
		}
		return nil
	}, insertSQL(&StatementEntries, "stage_arrow"), sql.Named("run_id", l.runID))
	if err != nil {
		return nil, fmt.Errorf("read statement %s: %w", first.Path, err)
	}
	stats := fileStats(pages, b)
	if err := stageRecord(ctx, conn, b.bad, stats); err != nil {
		return nil, err
	}
	args := append(windowArgs(first), sql.Named("account", first.Account), sql.Named("source", raw.SourceStatement),
		sql.Named("run_id", l.runID), sql.Named("report_id", nil), sql.Named("last", last))
	if err := execAll(ctx, tx, args,
		`DELETE FROM statement_entries WHERE rowid <= $last AND account = $account AND ((created_at >= $start AND created_at < $end)
			OR transaction_id IN (SELECT transaction_id FROM statement_entries WHERE rowid > $last))`,
		`DELETE FROM statements WHERE account = $account AND start_datetime >= $start AND end_datetime <= $end`,
		`DELETE FROM quarantine WHERE source = $source AND account = $account AND window_from >= $from AND window_to <= $to`,
	); err != nil {
		return nil, fmt.Errorf("load statement %s: %w", first.Path, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO statements VALUES ($account, $name, upper($currency),
		CAST($opening AS DECIMAL(38,12)), CAST($closing AS DECIMAL(38,12)), $start, $end, $generated, $entries, $file, $run_id)`,
		sql.Named("account", first.Account), sql.Named("name", nullable(head.AccountName)),
		sql.Named("currency", nullable(head.Currency)), sql.Named("opening", opening), sql.Named("closing", closing),
		sql.Named("start", first.Window.Start()), sql.Named("end", first.Window.End()), sql.Named("generated", generated),
		sql.Named("entries", total), sql.Named("file", first.Path), sql.Named("run_id", l.runID)); err != nil {
		return nil, fmt.Errorf("record statement %s: %w", first.Path, err)
	}
	if err := execAll(ctx, tx, args, recordFilesSQL...); err != nil {
		return nil, fmt.Errorf("record statement %s: %w", first.Path, err)
	}
	return stats, tx.Commit()
}

func nullable(v value) any {
	if !v.set {
		return nil
	}
	return escapeInvalid(v.s)
}

// amountArg validates an amount and returns it as exact text, or nil.
func amountArg(v value) (any, error) {
	if !v.set {
		return nil, nil
	}
	if _, err := parseAmount(v.s); err != nil {
		return nil, fmt.Errorf("bad decimal %q: %w", v.s, err)
	}
	d, _ := decimal.NewFromString(v.s) // parseAmount accepted it
	return d.String(), nil
}

// timeArg validates a timestamp and returns it as a time, or nil.
func timeArg(v value) (any, error) {
	if !v.set {
		return nil, nil
	}
	us, err := parseTime(v.s)
	if err != nil {
		return nil, fmt.Errorf("bad timestamp %q", v.s)
	}
	return microsTime(us), nil
}

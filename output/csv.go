package output

import (
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/shopspring/decimal"
)

// plainDecimal is a cell a spreadsheet reads as a number, never as a formula.
var plainDecimal = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?$`)

// Neutralise returns the cell as a spreadsheet shows it without running it:
// text starting with =, +, -, @, tab or CR gets a leading apostrophe (the
// OWASP advice against CSV formula injection). Plain decimals such as
// -12.50 stay as they are, so finance can still sum amount columns.
func Neutralise(cell string) string {
	if cell == "" {
		return cell
	}
	switch cell[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if plainDecimal.MatchString(cell) {
			return cell
		}
		return "'" + cell
	}
	return cell
}

// writeCSV writes the result of a query as an RFC 4180 file (CRLF line ends,
// quoting as needed) with a header row, neutralising every cell. Columns
// named in amounts are DECIMAL text printed in their shortest exact form.
// It returns the data rows written.
//
// The driver holds a query's whole result in memory, so the rows go into a
// temporary table first (a query's ORDER BY sorts there, spilling to disk)
// and are read back in order, csvPage rows at a time: a night of 950,000
// breaks, read in one result, ran out of DuckDB's 384 MB.
func writeCSV(ctx context.Context, conn *sql.Conn, path string, amounts map[string]bool, query string, args ...any) (int64, error) {
	var ordered bool
	if err := conn.QueryRowContext(ctx, `SELECT current_setting('preserve_insertion_order')`).Scan(&ordered); err != nil {
		return 0, err
	}
	if !ordered { // a table's rowids are then not the query's order
		return 0, errors.New("rows written in order need preserve_insertion_order on")
	}
	if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE csv_rows AS `+query, args...); err != nil {
		return 0, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS csv_rows`)
	var total int64
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM csv_rows`).Scan(&total); err != nil {
		return 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.UseCRLF = true
	var n int64
	for from := int64(0); from == 0 || from < total; from += csvPage {
		rows, err := conn.QueryContext(ctx, `FROM csv_rows WHERE rowid >= $1 AND rowid < $2`, from, from+csvPage)
		if err != nil {
			return n, err
		}
		page, err := writeRows(w, rows, amounts, from == 0)
		n += page
		if err != nil {
			return n, err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return n, err
	}
	return n, f.Close()
}

// csvPage is how many rows writeCSV reads at a time: about 30 MB of breaks.
const csvPage = 50_000

// writeRows writes rows to w, its header first when header says so, and
// closes rows. It returns the rows written.
func writeRows(w *csv.Writer, rows *sql.Rows, amounts map[string]bool, header bool) (int64, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	if header {
		if err := w.Write(cols); err != nil {
			return 0, err
		}
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rec := make([]string, len(cols))
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, v := range vals {
			rec[i] = v.String
			if amounts[cols[i]] && v.Valid {
				d, err := decimal.NewFromString(v.String)
				if err != nil {
					return n, fmt.Errorf("column %s: %w", cols[i], err)
				}
				rec[i] = d.String()
			}
			rec[i] = Neutralise(rec[i])
		}
		if err := w.Write(rec); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

package output

import (
	"context"
	"database/sql"
	"encoding/csv"
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
func writeCSV(ctx context.Context, conn *sql.Conn, path string, amounts map[string]bool, query string, args ...any) (int64, error) {
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.UseCRLF = true
	if err := w.Write(cols); err != nil {
		return 0, err
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
	if err := rows.Err(); err != nil {
		return n, err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return n, err
	}
	return n, f.Close()
}

package output

import (
	"context"
	"database/sql"
	"fmt"
)

// openWorkflow is true for a row of run_breaks that finance has not closed
// (workflow open or acknowledged).
const openWorkflow = `workflow_status IN ('open', 'acknowledged')`

// Handled sums the breaks of the run finance has handled, by workflow
// status (acknowledged, explained, written_off) and currency.
type Handled struct {
	Workflow string `json:"workflow_status"`
	Currency string `json:"currency"`
	Breaks   int64  `json:"breaks"`
	Amount   string `json:"amount"` // sum of difference
}

// handled reads the Handled rows of run_breaks: resolved breaks left out,
// except written-off ones, which stay counted with their amount.
func handled(ctx context.Context, conn *sql.Conn) ([]Handled, error) {
	out := []Handled{}
	err := query(ctx, conn, `SELECT workflow_status, currency, count(*), CAST(sum(difference) AS VARCHAR)
		FROM (SELECT workflow_status, coalesce(currency, '') AS currency, difference FROM run_breaks
			WHERE workflow_status <> 'open' AND (status <> 'resolved' OR workflow_status = 'written_off'))
		GROUP BY workflow_status, currency
		ORDER BY CASE workflow_status WHEN 'acknowledged' THEN 1 WHEN 'explained' THEN 2 ELSE 3 END, currency`, nil,
		func(rows *sql.Rows) error {
			var h Handled
			var amount sql.NullString
			if err := rows.Scan(&h.Workflow, &h.Currency, &h.Breaks, &amount); err != nil {
				return err
			}
			h.Amount = decimalText(amount)
			out = append(out, h)
			return nil
		})
	return out, err
}

// beforeWorkflow creates the temp table before_workflow: the workflow status
// of each break before the run, from the state archived under dir (none for
// a run archived before break_events existed).
func beforeWorkflow(ctx context.Context, conn *sql.Conn, dir string) error {
	q := `CREATE OR REPLACE TEMP TABLE before_workflow (break_id VARCHAR, workflow_status VARCHAR)`
	if files, err := beforeFiles(dir, "break_events"); err != nil {
		return err
	} else if len(files) > 0 {
		state, err := stateList(dir, "break_events")
		if err != nil {
			return err
		}
		q = fmt.Sprintf(`CREATE OR REPLACE TEMP TABLE before_workflow AS SELECT break_id, workflow_status
			FROM read_parquet(%s) QUALIFY row_number() OVER (PARTITION BY break_id ORDER BY seq DESC) = 1`, state)
	}
	if _, err := conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("workflow before the run: %w", err)
	}
	return nil
}

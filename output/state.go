package output

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"recon/rules"
)

// Folders of a run's inputs besides the raw files: the warehouse state the
// run started from, and the rule files it ran. Replay needs both, since rules
// read every loaded source (not only this run's files) and the break
// lifecycle continues from the previous runs.
const (
	InputsDir = "inputs"
	StateDir  = "inputs/state"
	RulesDir  = "inputs/rules"
)

// ledgerTables describe runs rather than data; they are not part of a run's state.
var ledgerTables = map[string]bool{"runs": true, "run_stages": true, "schema_version": true}

// SaveInputs writes, under runDir, every warehouse table (ledger excluded)
// as inputs/state/<table>.parquet, and the rule files as inputs/rules/<file>.
// Call it before the run loads anything.
func SaveInputs(ctx context.Context, db *sql.DB, runDir string, catalogue []rules.Rule) error {
	for _, d := range []string{StateDir, RulesDir} {
		if err := os.MkdirAll(filepath.Join(runDir, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
	}
	tables, err := stateTables(ctx, db)
	if err != nil {
		return err
	}
	for _, t := range tables {
		p := filepath.Join(runDir, filepath.FromSlash(StateDir), t+".parquet")
		if _, err := db.ExecContext(ctx, fmt.Sprintf(`COPY (SELECT * FROM main.%s) TO %s (FORMAT parquet, COMPRESSION zstd)`,
			ident(t), sqlString(p))); err != nil {
			return fmt.Errorf("save the state of %s: %w", t, err)
		}
	}
	for _, r := range catalogue {
		if err := os.WriteFile(filepath.Join(runDir, filepath.FromSlash(RulesDir), path.Base(r.File)), []byte(r.Text), 0o644); err != nil {
			return fmt.Errorf("save rule %s: %w", r.ID, err)
		}
	}
	return nil
}

// RestoreState loads the tables saved by SaveInputs under runDir into db,
// whose schema must already be migrated.
func RestoreState(ctx context.Context, db *sql.DB, runDir string) error {
	files, err := filepath.Glob(filepath.Join(runDir, filepath.FromSlash(StateDir), "*.parquet"))
	if err != nil {
		return err
	}
	have, err := stateTables(ctx, db)
	if err != nil {
		return err
	}
	for _, f := range files {
		t := strings.TrimSuffix(filepath.Base(f), ".parquet")
		if !slices.Contains(have, t) {
			return fmt.Errorf("restore state: table %s is not in this version's schema", t)
		}
		if _, err := db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO main.%s BY NAME SELECT * FROM read_parquet(%s)`,
			ident(t), sqlString(f))); err != nil {
			return fmt.Errorf("restore the state of %s: %w", t, err)
		}
	}
	return nil
}

func stateTables(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM duckdb_tables()
		WHERE database_name = current_database() AND schema_name = 'main' AND NOT temporary ORDER BY table_name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		if !ledgerTables[t] {
			out = append(out, t)
		}
	}
	return out, rows.Err()
}

// ident quotes a SQL identifier.
func ident(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

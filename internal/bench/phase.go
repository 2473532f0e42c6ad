package bench

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"recon/extract/raw"
	"recon/rules"
	reconsql "recon/sql"
	"recon/transform"
)

// PhaseOutput is what a child phase prints: the rows it handled, the
// seconds its measured work took, and any detail.
type PhaseOutput struct {
	Rows    int64           `json:"rows"`
	Seconds float64         `json:"seconds"`
	PeakRSS int64           `json:"peak_rss_bytes"` // of the whole process, from /proc (PeakRSS)
	Detail  json.RawMessage `json:"detail,omitempty"`
}

// PhaseArgs names one phase Run runs in a child process and its inputs.
type PhaseArgs struct {
	Phase    string // native, native-auto, ingest or rules
	CSV      string // native, native-auto: the CSV's path; ingest: its path under Dir
	Dir      string // ingest: the raw folder
	DB       string // the database written (native, ingest) or judged (rules)
	Day      time.Time
	AsOf     time.Time // rules
	Accounts []string  // rules
	Rules    string    // rules: a folder of rule files instead of rules.Builtin
}

// RunPhase runs one measured phase in this process. Native and ingest
// load the CSV into a fresh, migrated database and checkpoint it (the
// migration is not timed); rules applies the catalogue to a loaded
// database over the day.
func RunPhase(ctx context.Context, a PhaseArgs) (PhaseOutput, error) {
	var out PhaseOutput
	db, err := reconsql.OpenDB(a.DB, false)
	if err != nil {
		return out, err
	}
	defer db.Close()
	w, err := raw.NewWindow(a.Day, a.Day)
	if err != nil && a.Phase != "native" && a.Phase != "native-auto" {
		return out, err
	}
	if a.Phase != "rules" {
		if _, err := reconsql.Migrate(ctx, db); err != nil {
			return out, err
		}
	}
	start := time.Now()
	switch a.Phase {
	case "native", "native-auto":
		// The engine at its best: DuckDB's default memory limit (80% of
		// memory), not recon's; with recon's, read_csv takes about twice as long.
		if out.Rows, err = native(ctx, db, a); err != nil {
			return out, fmt.Errorf("%s read_csv: %w", a.Phase, err)
		}
	case "ingest":
		files := []raw.File{{Source: raw.SourceRecon, Format: raw.FormatCSV, Path: a.CSV,
			Window: w, Status: raw.StatusReady, ReportID: "bench"}}
		st, err := transform.NewLoader(db, a.Dir, "r-bench", nil).Load(ctx, files)
		if err != nil {
			return out, err
		}
		out.Rows = st.Rows(raw.SourceRecon)
	case "rules":
		dir := rules.Builtin
		if a.Rules != "" {
			dir = rules.Dir{Name: a.Rules, FS: os.DirFS(a.Rules)}
		}
		catalogue, err := rules.Load(dir)
		if err != nil {
			return out, err
		}
		res, err := rules.Apply(ctx, db, catalogue, rules.Run{ID: "r-bench", Window: w, AsOf: a.AsOf, Accounts: a.Accounts})
		if err != nil {
			return out, err
		}
		took := map[string]float64{}
		for id, d := range res.Took {
			took[id] = d.Seconds()
		}
		for _, n := range res.Found {
			out.Rows += n
		}
		if out.Detail, err = json.Marshal(took); err != nil {
			return out, err
		}
	default:
		return out, fmt.Errorf("unknown bench phase %q", a.Phase)
	}
	if a.Phase == "ingest" {
		if _, err := db.ExecContext(ctx, "CHECKPOINT"); err != nil {
			return out, err
		}
	}
	out.Seconds = time.Since(start).Seconds()
	out.PeakRSS = PeakRSS()
	return out, nil
}

// NativeCSV returns the statements that read a RECON CSV with DuckDB's own
// read_csv, each column typed as in recon_transactions, into a table
// "native" of those columns: the engine's own speed on the same file.
// db must be migrated.
func NativeCSV(ctx context.Context, db *sql.DB, path string) (create, insert string, err error) {
	types := map[string]string{}
	var defs []string
	rows, err := db.QueryContext(ctx, `SELECT column_name, data_type FROM duckdb_columns()
		WHERE table_name = 'recon_transactions' AND column_name NOT IN ('extra', 'report_id', 'source_file', 'source_line')
		ORDER BY column_index`)
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	for rows.Next() {
		var c, t string
		if err := rows.Scan(&c, &t); err != nil {
			return "", "", err
		}
		types[c] = t
		defs = append(defs, c+" "+t)
	}
	if err := rows.Err(); err != nil {
		return "", "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	header, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return "", "", fmt.Errorf("header of %s: %w", path, err)
	}
	var cols []string
	for _, h := range strings.Split(strings.TrimSpace(header), ",") {
		t, ok := types[h]
		if !ok {
			return "", "", fmt.Errorf("%s: column %q is not in recon_transactions", path, h)
		}
		cols = append(cols, fmt.Sprintf("'%s': '%s'", h, t))
	}
	return `CREATE TABLE native (` + strings.Join(defs, ", ") + `)`,
		fmt.Sprintf(`INSERT INTO native BY NAME SELECT * FROM read_csv('%s', header = true, auto_detect = false,
			delim = ',', quote = '"', escape = '"', columns = {%s})`, strings.ReplaceAll(path, "'", "''"), strings.Join(cols, ", ")), nil
}

// native loads a.CSV with DuckDB's read_csv at DuckDB's default memory
// limit and checkpoints: typed as recon_transactions (native), or plain
// read_csv with auto-detection into a table of the types it detects
// (native-auto: the fastest DuckDB reads that file). It returns the rows.
func native(ctx context.Context, db *sql.DB, a PhaseArgs) (int64, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	create, insert := "", fmt.Sprintf(`CREATE TABLE native_auto AS SELECT * FROM read_csv('%s')`, strings.ReplaceAll(a.CSV, "'", "''"))
	if a.Phase == "native" {
		if create, insert, err = NativeCSV(ctx, db, a.CSV); err != nil {
			return 0, err
		}
	}
	var limit string
	if _, err = conn.ExecContext(ctx, "RESET memory_limit"); err == nil { // RESET alone leaves the buffer pool at its old size
		err = conn.QueryRowContext(ctx, "SELECT current_setting('memory_limit')").Scan(&limit)
	}
	for _, q := range []string{"SET memory_limit = '" + limit + "'", create} {
		if err == nil && q != "" {
			_, err = conn.ExecContext(ctx, q)
		}
	}
	var res sql.Result
	if err == nil {
		res, err = conn.ExecContext(ctx, insert)
	}
	if err == nil {
		_, err = conn.ExecContext(ctx, "CHECKPOINT")
	}
	if err != nil {
		return 0, err
	}
	if a.Phase == "native" {
		return res.RowsAffected()
	}
	var n int64 // CREATE TABLE AS reports no rows affected
	err = conn.QueryRowContext(ctx, `SELECT count(*) FROM native_auto`).Scan(&n)
	return n, err
}

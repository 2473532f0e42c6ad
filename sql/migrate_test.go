package sql_test

import (
	"context"
	dbsql "database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	reconsql "recon/sql"
)

func openDB(t *testing.T) *dbsql.DB {
	t.Helper()
	db, err := reconsql.OpenDB(filepath.Join(t.TempDir(), "m.duckdb"), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestMigrateIsIdempotent applies every migration, then again: the second
// pass applies nothing and the version stays.
func TestMigrateIsIdempotent(t *testing.T) {
	db := openDB(t)
	ms, err := reconsql.List(reconsql.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	want := ms[len(ms)-1].Version
	for i := range 2 {
		v, err := reconsql.Migrate(t.Context(), db)
		if err != nil {
			t.Fatalf("pass %d: %v", i+1, err)
		}
		if v != want {
			t.Fatalf("pass %d: version %d, want %d", i+1, v, want)
		}
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM schema_version`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(ms) {
		t.Errorf("schema_version has %d rows, want one per migration (%d)", n, len(ms))
	}
}

// TestEveryTableAndColumnIsCommented checks the contract of DESIGN.md §6:
// analysts read what each table, view and column means from the file itself.
func TestEveryTableAndColumnIsCommented(t *testing.T) {
	db := openDB(t)
	if _, err := reconsql.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	var missing []string
	rows, err := db.Query(`SELECT table_name FROM duckdb_tables() WHERE NOT internal AND NOT temporary AND coalesce(comment, '') = ''
		UNION ALL SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary AND coalesce(comment, '') = ''
		UNION ALL SELECT table_name || '.' || column_name FROM duckdb_columns() WHERE NOT internal AND database_name = current_database() AND coalesce(comment, '') = ''
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		missing = append(missing, s)
	}
	if len(missing) > 0 {
		t.Errorf("no comment on: %s", strings.Join(missing, ", "))
	}
	// The names other tools rely on (DESIGN.md §6) all exist.
	for _, name := range []string{"report_files", "payment_ops", "recon_transactions", "failure_conversions",
		"liquidations", "liquidation_trades", "trade_executions", "statements", "statement_entries", "payments",
		"transfers", "balances", "fees", "quarantine", "runs", "run_stages", "breaks", "report_changes", "source_files",
		"open_breaks", "break_summary", "break_ageing", "payment_trace"} {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM (SELECT table_name AS n FROM duckdb_tables() UNION ALL SELECT view_name FROM duckdb_views()) WHERE n = ?`, name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%s: %d objects, want 1", name, n)
		}
	}
}

func TestListRejectsBadNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"no number":  {"init.sql": {Data: []byte("SELECT 1")}},
		"zero":       {"0000_init.sql": {Data: []byte("SELECT 1")}},
		"duplicate":  {"0001_a.sql": {Data: []byte("SELECT 1")}, "001_b.sql": {Data: []byte("SELECT 1")}},
		"not number": {"00x1_a.sql": {Data: []byte("SELECT 1")}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := reconsql.List(fsys); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// TestFailedMigrationLeavesNoTrace: a migration that fails part way is
// rolled back whole and not recorded.
func TestFailedMigrationLeavesNoTrace(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	if _, err := reconsql.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	ms, _ := reconsql.List(reconsql.Migrations)
	last := ms[len(ms)-1].Version
	bad := fstest.MapFS{"9999_bad.sql": {Data: []byte("CREATE TABLE half_done (a INT); SELECT * FROM no_such_table;")}}
	if _, err := reconsql.MigrateFS(ctx, db, bad); err == nil {
		t.Fatal("bad migration applied")
	}
	var v, n int
	if err := db.QueryRow(`SELECT max(version) FROM schema_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM duckdb_tables() WHERE table_name = 'half_done'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if v != last || n != 0 {
		t.Errorf("after a failed migration: version %d (want %d), half_done tables %d (want 0)", v, last, n)
	}
}

// TestMigratedFileSurvivesACrash copies a freshly migrated file with its
// write-ahead log, as a crash would leave them, and opens the copy: DuckDB
// replays the log (migrations, comments) into the same schema.
func TestMigratedFileSurvivesACrash(t *testing.T) {
	dir := t.TempDir()
	db, err := reconsql.OpenDB(filepath.Join(dir, "live.duckdb"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := reconsql.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"", ".wal"} {
		b, err := os.ReadFile(filepath.Join(dir, "live.duckdb"+ext))
		if err != nil {
			t.Fatalf("the migrated file has no %q part to replay: %v", ext, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "crashed.duckdb"+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	crashed, err := reconsql.OpenDB(filepath.Join(dir, "crashed.duckdb"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer crashed.Close()
	var comments int
	if err := crashed.QueryRow(`SELECT count(*) FROM duckdb_columns() WHERE table_name = 'schema_version' AND comment <> ''`).Scan(&comments); err != nil {
		t.Fatalf("open the crashed copy: %v", err)
	}
	if comments != 3 {
		t.Errorf("schema_version has %d commented columns after the replay, want 3", comments)
	}
}

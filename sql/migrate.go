// Package sql holds recon's DuckDB schema as ordered, embedded migrations
// and applies them.
package sql

import (
	"context"
	dbsql "database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var files embed.FS

//go:embed derived.sql
var derived string

// Migrations is the folder of NNNN_name.sql files, applied in order.
var Migrations, _ = fs.Sub(files, "migrations")

// Migration is one schema step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// List reads and orders the migrations of fsys, rejecting bad names and duplicate versions.
func List(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, n := range names {
		num, _, ok := strings.Cut(n, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", n)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migration %s: version %d already used by %s", n, v, prev)
		}
		seen[v] = n
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", n, err)
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(path.Base(n), ".sql"), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Migrate applies recon's migrations not yet recorded in schema_version,
// each in its own transaction, and returns the resulting version.
// When it applies any, it then fills the derived columns (Derive).
func Migrate(ctx context.Context, db *dbsql.DB) (int, error) {
	v, applied, err := migrate(ctx, db, Migrations)
	if err == nil && applied {
		err = Derive(ctx, db)
	}
	return v, err
}

// MigrateFS applies the migrations of fsys, as Migrate does.
func MigrateFS(ctx context.Context, db *dbsql.DB, fsys fs.FS) (int, error) {
	v, _, err := migrate(ctx, db, fsys)
	return v, err
}

// migrate applies the migrations of fsys not yet recorded; applied says
// whether there was any.
func migrate(ctx context.Context, db *dbsql.DB, fsys fs.FS) (current int, applied bool, err error) {
	ms, err := List(fsys)
	if err != nil {
		return 0, false, err
	}
	// No DEFAULT now() on applied_at: DuckDB 1.4.5 cannot replay, after a
	// crash, a write-ahead log that comments a column of a table with a
	// function default (duckdb/duckdb#21490, fixed in later releases).
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)`); err != nil {
		return 0, false, fmt.Errorf("create schema_version: %w", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&current); err != nil {
		return 0, false, fmt.Errorf("read schema version: %w", err)
	}
	for _, m := range ms {
		if m.Version <= current {
			continue
		}
		if err := apply(ctx, db, m); err != nil {
			return current, applied, err
		}
		current, applied = m.Version, true
	}
	return current, applied, nil
}

// Derive fills the columns the loader derives for rows loaded without
// them (derived.sql): after migrations, and after restoring an older run's
// state. Rows that have them are left alone.
func Derive(ctx context.Context, db *dbsql.DB) error {
	if _, err := db.ExecContext(ctx, derived); err != nil {
		return fmt.Errorf("derive loaded columns: %w", err)
	}
	return nil
}

func apply(ctx context.Context, db *dbsql.DB, m Migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, now())`, m.Version, m.Name); err != nil {
		return fmt.Errorf("migration %s: record version: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %s: commit: %w", m.Name, err)
	}
	return nil
}

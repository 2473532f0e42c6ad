package sql

import (
	"context"
	dbsql "database/sql"
	"database/sql/driver"
	"fmt"
	"sync/atomic"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// memoryLimit bounds DuckDB's buffer pool (its default is 80% of the
// machine's memory): past it, large stages, joins and sorts spill to
// <db>.tmp, so a run's memory stays about the same whatever its size
// (docs/performance.md). DuckDB uses every core (threads). On a 1M-payment
// day the loads ran as fast at 384 MB as at 512 and DuckDB filled the pool
// with blocks it had written; the rules did not (fee_mismatch spills), so
// they run at RulesMemoryLimit (WithMemoryLimit).
const memoryLimit = "384MB"

// checkpointThreshold is the write-ahead log's size at which a commit
// checkpoints. At DuckDB's 16 MB, each of the two dozen transactions that
// load a 1M day's liquidations checkpointed the tables it had grown, and
// compressed their last row groups again: the liquidations took 13.5 s of
// commits and appends against 5.9 s at 1 GB (docs/performance.md). The
// load stage and Publish checkpoint explicitly.
const checkpointThreshold = "1GB"

// databaseSettings are the settings of the database that the first
// connection of a handle sets.
var databaseSettings = []string{
	"SET memory_limit = '" + memoryLimit + "'",
	"SET checkpoint_threshold = '" + checkpointThreshold + "'",
	// jemalloc, DuckDB's allocator, gives freed pages back to the system from
	// its own threads. Without them a page stayed resident until its arena
	// allocated again: at the peaks of three 1M-payment runs (944-1,059 MiB)
	// jemalloc held 81-218 MB of freed pages. With them it held 33-78 MB
	// there, the peaks were 898-940 MiB, and the load was no slower
	// (docs/performance.md).
	"SET allocator_background_threads = true",
}

// RulesMemoryLimit is DuckDB's memory limit while the rules run.
const RulesMemoryLimit = "512MB"

// OpenDB opens a DuckDB file ("" for an in-memory database) with recon's
// session settings: UTC on every connection, and databaseSettings set by
// the first. DuckDB shares one instance per path within a process: close
// every handle on a file before opening it again after a run published it.
func OpenDB(path string, readOnly bool) (*dbsql.DB, error) {
	dsn := path
	if readOnly {
		dsn += "?access_mode=read_only"
	}
	var limited atomic.Bool
	c, err := duckdb.NewConnector(dsn, func(e driver.ExecerContext) error {
		qs := []string{"SET TimeZone = 'UTC'"}
		if !limited.Swap(true) { // later connections keep a limit WithMemoryLimit set
			qs = append(qs, databaseSettings...)
		}
		for _, q := range qs {
			if _, err := e.ExecContext(context.Background(), q, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return dbsql.OpenDB(c), nil
}

// WithMemoryLimit runs fn with DuckDB's memory limit at limit (a setting of
// the database: every connection sees it), then puts memoryLimit back, when
// fn fails too.
func WithMemoryLimit(ctx context.Context, db Execer, limit string, fn func() error) error {
	return withSetting(ctx, db, "memory limit", "SET memory_limit = '"+limit+"'", "SET memory_limit = '"+memoryLimit+"'", fn)
}

// withSetting runs set, then fn, then reset, which runs when fn fails too
// (and when ctx is done); errors are prefixed with what.
func withSetting(ctx context.Context, db Execer, what, set, reset string, fn func() error) error {
	if _, err := db.ExecContext(ctx, set); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	err := fn()
	if _, rerr := db.ExecContext(context.WithoutCancel(ctx), reset); rerr != nil && err == nil {
		err = fmt.Errorf("%s: %w", what, rerr)
	}
	return err
}

// Execer runs a statement: a *sql.DB, *sql.Conn or *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (dbsql.Result, error)
}

// Unordered runs fn with preserve_insertion_order off: bulk inserts and
// COPY then run on every core instead of keeping the order they read rows
// in (about 3x faster for a Parquet COPY of a wide table of millions of
// rows). It is a setting of the database, not of the connection, so fn
// changes the order of whatever the database writes meanwhile; it is reset
// after. For writes whose readers never depend on row order: loaded rows
// carry their file and line, state slices are fingerprinted and restored as
// sets.
func Unordered(ctx context.Context, db Execer, fn func() error) error {
	return withSetting(ctx, db, "unordered writes", `SET preserve_insertion_order = false`, `RESET preserve_insertion_order`, fn)
}

package sql_test

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	reconsql "recon/sql"
)

// TestOpenDBSettings: every connection of a handle OpenDB gives, read-only
// ones too, runs in UTC under recon's memory limit and checkpoint threshold,
// with jemalloc purging in the background.
func TestOpenDBSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.duckdb")
	rw, err := reconsql.OpenDB(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reconsql.Migrate(t.Context(), rw); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	ro, err := reconsql.OpenDB(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var conns []any
	for range 2 { // two connections held at once: the settings are per connection
		c, err := ro.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var tz, limit, wal string
		var purge bool
		if err := c.QueryRowContext(t.Context(), `SELECT current_setting('TimeZone'), current_setting('memory_limit'),
			current_setting('checkpoint_threshold'), current_setting('allocator_background_threads')`).Scan(&tz, &limit, &wal, &purge); err != nil {
			t.Fatal(err)
		}
		if tz != "UTC" || limit != "366.2 MiB" || wal != "953.6 MiB" || !purge {
			t.Errorf("connection %d: TimeZone %q, memory_limit %q, checkpoint_threshold %q, allocator_background_threads %t, want UTC, 366.2 MiB (384MB), 953.6 MiB (1GB), true",
				len(conns), tz, limit, wal, purge)
		}
		conns = append(conns, c)
		if _, err := c.ExecContext(t.Context(), `CREATE TABLE x (a INT)`); err == nil {
			t.Error("a read-only handle created a table")
		}
	}
}

// TestWithMemoryLimit: fn runs at the limit given, seen by a connection
// opened meanwhile too (opening one does not set it back), and the
// database's limit is back after, when fn fails too.
func TestWithMemoryLimit(t *testing.T) {
	db, err := reconsql.OpenDB(filepath.Join(t.TempDir(), "limit.duckdb"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	limit := func(c *sql.Conn) string {
		var l string
		if err := c.QueryRowContext(t.Context(), `SELECT current_setting('memory_limit')`).Scan(&l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	first, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	failed := errors.New("fn failed")
	for _, want := range []error{nil, failed} {
		var during string
		err := reconsql.WithMemoryLimit(t.Context(), first, reconsql.RulesMemoryLimit, func() error {
			other, err := db.Conn(t.Context())
			if err != nil {
				return err
			}
			defer other.Close()
			during = limit(other)
			return want
		})
		if !errors.Is(err, want) {
			t.Errorf("error %v, want %v", err, want)
		}
		if after := limit(first); during != "488.2 MiB" || after != "366.2 MiB" {
			t.Errorf("fn failing (%v): limit %q during, %q after; want 488.2 MiB, then 366.2 MiB", want, during, after)
		}
	}
}

// TestUnordered: insertion order is off while fn runs, on every connection
// (a database setting), and back on after, when fn fails too; fn's error is
// returned.
func TestUnordered(t *testing.T) {
	db, err := reconsql.OpenDB("", false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ordered := func() bool {
		var on bool
		if err := db.QueryRow(`SELECT current_setting('preserve_insertion_order')`).Scan(&on); err != nil {
			t.Fatal(err)
		}
		return on
	}
	failed := errors.New("fn failed")
	for _, want := range []error{nil, failed} {
		var during bool
		err := reconsql.Unordered(t.Context(), db, func() error {
			during = ordered()
			return want
		})
		if !errors.Is(err, want) || during || !ordered() {
			t.Errorf("fn returning %v: err %v, ordered during %v and after %v; want the error, false and true", want, err, during, ordered())
		}
	}
}

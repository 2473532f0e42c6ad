package sql_test

import (
	"errors"
	"path/filepath"
	"testing"

	reconsql "recon/sql"
)

// TestOpenDBSettings: every connection of a handle OpenDB gives, read-only
// ones too, runs in UTC under recon's memory limit.
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
		var tz, limit string
		if err := c.QueryRowContext(t.Context(), `SELECT current_setting('TimeZone'), current_setting('memory_limit')`).Scan(&tz, &limit); err != nil {
			t.Fatal(err)
		}
		if tz != "UTC" || limit != "488.2 MiB" {
			t.Errorf("connection %d: TimeZone %q, memory_limit %q, want UTC, 488.2 MiB (512MB)", len(conns), tz, limit)
		}
		conns = append(conns, c)
		if _, err := c.ExecContext(t.Context(), `CREATE TABLE x (a INT)`); err == nil {
			t.Error("a read-only handle created a table")
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

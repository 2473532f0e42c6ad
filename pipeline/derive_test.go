package pipeline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
	"recon/output"
	"recon/pipeline"
	reconsql "recon/sql"
)

// TestDeriveMatchesLoader checks that sql.Derive, which fills the derived
// columns of rows loaded before they existed (and of an older run's state
// restored for a replay), gives what the loader derives from the JSON.
func TestDeriveMatchesLoader(t *testing.T) {
	e := newEnv(t, 3)
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 2))
	e.run(t, w)
	db, err := reconsql.OpenDB(e.cfg.DB, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	const (
		results = `SELECT payment_id || ' ' || execution_result_id || ' ' || result_list || ' ' ||
			concat_ws(',', coalesce(sender_node_type, '-'), coalesce(receiver_node_type, '-'), coalesce(payment_type, '-'),
				coalesce(payment_method, '-'))
			FROM payment_execution_results ORDER BY ALL`
		payments = `SELECT payment_id || ' ' || coalesce(CAST(fee_totals_differ AS VARCHAR), '-') FROM payments ORDER BY ALL`
	)
	loaded := map[string][]string{"results": column(t, db, results), "payments": column(t, db, payments)}
	for _, q := range []string{
		`UPDATE payment_execution_results SET sender_node_type = NULL, receiver_node_type = NULL, payment_type = NULL, payment_method = NULL`,
		`UPDATE payments SET fee_totals_differ = NULL`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := reconsql.Derive(ctx, db); err != nil {
		t.Fatal(err)
	}
	derived := map[string][]string{"results": column(t, db, results), "payments": column(t, db, payments)}
	if diff := cmp.Diff(loaded, derived); diff != "" {
		t.Errorf("Derive differs from the loader (-loaded +derived):\n%s", diff)
	}
	// The sandbox's day has every case the columns distinguish.
	for _, q := range []string{
		`SELECT count(*) FROM payments WHERE fee_totals_differ`,
		`SELECT count(*) FROM payments WHERE NOT fee_totals_differ`,
		`SELECT count(*) FROM payment_execution_results WHERE sender_node_type = 'INITIAL'`,
		`SELECT count(*) FROM payment_execution_results WHERE sender_node_type = 'INTERMEDIATE'`,
		`SELECT count(*) FROM payment_execution_results WHERE receiver_node_type = 'TERMINAL'`,
		`SELECT count(*) FROM payment_execution_results WHERE payment_type = 'RETURN'`,
	} {
		var n int64
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil || n == 0 {
			t.Errorf("%s: %d (%v), want some", q, n, err)
		}
	}
}

// TestReplayDerivesOlderState replays a run whose archived state was saved
// before migration 0073 (its Parquet lacks the derived columns): replay
// fills them for the restored rows (sql.Derive after output.RestoreState),
// and the break files are still reproduced.
func TestReplayDerivesOlderState(t *testing.T) {
	e := newEnv(t, 7)
	e.run(t, mustWindow(t, 0, 2))
	later := now.Add(50 * time.Hour)
	e.cfg.Now = func() time.Time { later = later.Add(time.Second); return later }
	second := e.run(t, mustWindow(t, 2, 4)) // starts from the first run's days 0 and 1
	toOldLayout(t, e.cfg.ArchiveURL, second.RunID, map[string]string{
		"payment_execution_results": "sender_node_type, receiver_node_type, payment_type, payment_method",
		"payments":                  "fee_totals_differ",
	})
	st, err := output.NewDirStore(e.cfg.ArchiveURL)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := pipeline.Replay(t.Context(), st, second.RunID, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Identical() {
		t.Errorf("replay differs: %+v", res.Files)
	}
	db, err := reconsql.OpenDB(filepath.Join(dir, "replay.duckdb"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		q    string
		want func(int64) bool
	}{
		{fmt.Sprintf(`SELECT count(*) FROM payment_execution_results WHERE result_list = 'execution' AND execution_timestamp < TIMESTAMPTZ '%s'`,
			day0.AddDate(0, 0, 2).Format(time.DateOnly)), func(n int64) bool { return n > 0 }}, // rows of the restored state, not re-loaded
		{`SELECT count(*) FROM payment_execution_results WHERE result_list = 'execution' AND sender_node_type IS NULL`,
			func(n int64) bool { return n == 0 }},
		{`SELECT count(*) FROM payments WHERE fee_totals_differ IS NULL`, func(n int64) bool { return n == 0 }},
	} {
		var n int64
		if err := db.QueryRow(c.q).Scan(&n); err != nil || !c.want(n) {
			t.Errorf("%s: %d (%v)", c.q, n, err)
		}
	}
}

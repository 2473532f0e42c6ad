package pipeline_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
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

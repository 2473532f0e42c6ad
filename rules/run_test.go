package rules_test

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
	"recon/rules"
)

// breakRow is what the lifecycle tests look at in breaks.
type breakRow struct {
	ID, Rule, Key, Status, Severity, Base, Escalation, FirstSeen, LastSeen, Resolved, Bucket string
	Age                                                                                      int
}

func breaksByKey(t *testing.T, db *sql.DB) map[string]breakRow {
	t.Helper()
	rows, err := db.Query(`SELECT break_id, rule_id, break_key, status, severity, base_severity, coalesce(escalation, ''),
		first_seen_run, last_seen_run, coalesce(resolved_run, ''), ageing_bucket, age_days FROM breaks`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]breakRow{}
	for rows.Next() {
		var b breakRow
		if err := rows.Scan(&b.ID, &b.Rule, &b.Key, &b.Status, &b.Severity, &b.Base, &b.Escalation, &b.FirstSeen,
			&b.LastSeen, &b.Resolved, &b.Bucket, &b.Age); err != nil {
			t.Fatal(err)
		}
		out[b.Rule+" "+b.Key] = b
	}
	return out
}

func stableID(rule, key string) string {
	sum := sha256.Sum256([]byte(rule + ":" + key))
	return hex.EncodeToString(sum[:])[:16]
}

// fixture writes CSV fixtures into a folder and loads them.
func fixture(t *testing.T, db *sql.DB, tables map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for table, body := range tables {
		if err := os.WriteFile(filepath.Join(dir, table+".csv"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	loadFixtures(t, db, dir)
}

func exec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
}

func builtin(t *testing.T) []rules.Rule {
	t.Helper()
	rs, err := rules.Load(rules.Builtin)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

const lifecycleOps = `network_payment_id,quote_ts,payment_state,sent_amount,sent_currency,report_id
p-fixed,2026-10-01T10:00:00Z,COMPLETED,100.00,USD,rpt-ops
p-open,2026-10-01T11:00:00Z,COMPLETED,200.00,USD,rpt-ops
p-big,2026-10-01T12:00:00Z,COMPLETED,250000.00,USD,rpt-ops
`

// TestLifecycle runs the whole catalogue several times over one database:
// new, then persisting with the same ids, then resolved once the data is
// fixed; a run over another window resolves nothing; a break found again
// after it was resolved is new again. Ageing and escalation follow.
func TestLifecycle(t *testing.T) {
	db := newDB(t)
	fixture(t, db, map[string]string{"payment_ops": lifecycleOps})
	cat := builtin(t)
	w := raw.Window{From: day(0), To: day(0)}
	run := func(id string, w raw.Window, asOf time.Time) rules.Result {
		return apply(t, db, cat, rules.Run{ID: id, Window: w, AsOf: asOf})
	}
	const rule = "ops_missing_in_recon"
	get := func(key string) breakRow {
		t.Helper()
		b, ok := breaksByKey(t, db)[rule+" "+key]
		if !ok {
			t.Fatalf("no break %s %s", rule, key)
		}
		return b
	}
	want := func(key string, b breakRow) {
		t.Helper()
		b.ID, b.Rule, b.Key = stableID(rule, key), rule, key
		if diff := cmp.Diff(b, get(key)); diff != "" {
			t.Errorf("break %s (-want +got):\n%s", key, diff)
		}
	}

	// Run 1: both found, new. The big one is escalated by its amount.
	if res := run("r1", w, day(1)); res.Found[rule] != 3 || res.Resolved != 0 {
		t.Fatalf("run 1: %+v", res)
	}
	want("p-fixed", breakRow{Status: "new", Severity: "P2", Base: "P2", FirstSeen: "r1", LastSeen: "r1", Bucket: "0-1"})
	want("p-big", breakRow{Status: "new", Severity: "P1", Base: "P2", Escalation: "amount", FirstSeen: "r1", LastSeen: "r1", Bucket: "0-1"})

	// Run 2, a day later, same window: persisting, same ids, first seen in run 1.
	run("r2", w, day(2))
	want("p-fixed", breakRow{Status: "persisting", Severity: "P2", Base: "P2", FirstSeen: "r1", LastSeen: "r2", Age: 1, Bucket: "0-1"})

	// The RECON row of p-fixed arrives. Run 3, a week after run 1: p-fixed is
	// resolved, p-open persists and, open for more than 5 days, is escalated.
	fixture(t, db, map[string]string{"recon_transactions": "network_payment_id,quote_ts,transaction_id,report_id\np-fixed,2026-10-01T10:00:00Z,t-1,rpt-recon\n"})
	if res := run("r3", w, day(8)); res.Resolved != 1 || res.Found[rule] != 2 {
		t.Fatalf("run 3: %+v", res)
	}
	want("p-fixed", breakRow{Status: "resolved", Severity: "P2", Base: "P2", FirstSeen: "r1", LastSeen: "r2", Resolved: "r3", Age: 7, Bucket: "2-7"})
	want("p-open", breakRow{Status: "persisting", Severity: "P1", Base: "P2", Escalation: "age", FirstSeen: "r1", LastSeen: "r3", Age: 7, Bucket: "2-7"})
	want("p-big", breakRow{Status: "persisting", Severity: "P1", Base: "P2", Escalation: "amount, age", FirstSeen: "r1", LastSeen: "r3", Age: 7, Bucket: "2-7"})

	// The RECON row of p-open arrives, but a run over another window does not see its day.
	fixture(t, db, map[string]string{"recon_transactions": "network_payment_id,quote_ts,transaction_id,report_id\np-open,2026-10-01T11:00:00Z,t-2,rpt-recon\n"})
	if res := run("r4", raw.Window{From: day(3), To: day(4)}, day(40)); res.Resolved != 0 {
		t.Fatalf("run 4 over another window resolved %d breaks", res.Resolved)
	}
	want("p-open", breakRow{Status: "persisting", Severity: "P1", Base: "P2", Escalation: "age", FirstSeen: "r1", LastSeen: "r3", Age: 7, Bucket: "2-7"})

	// p-fixed loses its RECON row again: found again, it is a new break.
	exec(t, db, `DELETE FROM recon_transactions WHERE network_payment_id = 'p-fixed'`)
	run("r5", w, day(40))
	want("p-fixed", breakRow{Status: "new", Severity: "P2", Base: "P2", FirstSeen: "r5", LastSeen: "r5", Bucket: "0-1"})
	want("p-open", breakRow{Status: "resolved", Severity: "P1", Base: "P2", Escalation: "age", FirstSeen: "r1", LastSeen: "r3", Resolved: "r5", Age: 39, Bucket: ">30"})
}

// TestIncompleteSourceHoldsRules: when the RECON report of the window
// FAILED, the rules reading recon_transactions add no break and resolve none
// on the days around the gap, while the other rules and days go on.
func TestIncompleteSourceHoldsRules(t *testing.T) {
	db := newDB(t)
	fixture(t, db, map[string]string{
		"payment_ops": `network_payment_id,quote_ts,payment_state,sent_amount,sent_currency,report_id
p-open,2026-10-01T10:00:00Z,COMPLETED,100.00,USD,rpt-ops
p-matched,2026-10-01T11:00:00Z,COMPLETED,100.00,USD,rpt-ops
p-later,2026-10-05T11:00:00Z,COMPLETED,100.00,USD,rpt-ops
`,
		"recon_transactions": "network_payment_id,quote_ts,transaction_id,report_id\np-matched,2026-10-01T11:00:00Z,t-1,rpt-recon\n",
		"failure_conversions": `network_payment_id,execution_timestamp,ssa_remote_transfer_id,ssa_transfer_state,report_id
p-failed,2026-10-01T12:00:00Z,x-1,PENDING,rpt-failure
`,
	})
	cat := builtin(t)
	w := raw.Window{From: day(0), To: day(4)}
	apply(t, db, cat, rules.Run{ID: "r1", Window: w, AsOf: day(6)})
	before := breaksByKey(t, db)
	for _, k := range []string{"ops_missing_in_recon p-open", "ops_missing_in_recon p-later", "failed_payment_unrecovered p-failed|x-1"} {
		if before[k].Status != "new" {
			t.Fatalf("run 1: %s is %+v", k, before[k])
		}
	}

	// Run 2: the RECON report of 2026-10-01..2026-10-02 FAILED, so what is
	// loaded there is stale: p-matched's row is gone and p-open's came (both
	// unseen by a complete report). The funds of p-failed came back.
	exec(t, db, `DELETE FROM recon_transactions`)
	fixture(t, db, map[string]string{
		"recon_transactions":  "network_payment_id,quote_ts,transaction_id,report_id\np-open,2026-10-01T10:00:00Z,t-2,rpt-recon\n",
		"failure_conversions": "network_payment_id,execution_timestamp,ssa_remote_transfer_id,ssa_transfer_state,report_id\np-failed,2026-10-01T12:00:00Z,x-1,COMPLETED,rpt-failure-2\n",
	})
	exec(t, db, `DELETE FROM failure_conversions WHERE ssa_transfer_state = 'PENDING'`)
	gap := raw.Window{From: day(0), To: day(1)}
	res := apply(t, db, cat, rules.Run{ID: "r2", Window: w, AsOf: day(7),
		Gaps: []rules.Gap{{Table: "recon_transactions", Window: gap}}})

	held := map[string]bool{}
	for _, h := range res.Held {
		if h.Table != "recon_transactions" || h.Window != (raw.Window{From: day(-1), To: day(2)}) {
			t.Errorf("hold %+v: want recon_transactions over 2026-09-30..2026-10-03", h)
		}
		held[h.Rule] = true
	}
	wantHeld := map[string]bool{"ops_missing_in_recon": true, "recon_missing_in_ops": true,
		"ops_recon_amount_mismatch": true, "statement_entry_without_payment": true, "liquidation_amount_mismatch": true}
	if diff := cmp.Diff(wantHeld, held); diff != "" {
		t.Errorf("held rules (-want +got):\n%s", diff)
	}
	after := breaksByKey(t, db)
	if _, invented := after["ops_missing_in_recon p-matched"]; invented {
		t.Error("a break was invented from the failed side: ops_missing_in_recon p-matched")
	}
	if diff := cmp.Diff(before["ops_missing_in_recon p-open"], after["ops_missing_in_recon p-open"]); diff != "" {
		t.Errorf("a break the held rule cannot see changed (-before +after):\n%s", diff)
	}
	if b := after["ops_missing_in_recon p-later"]; b.Status != "persisting" || b.LastSeen != "r2" {
		t.Errorf("a day away from the gap is still judged: %+v", b)
	}
	if b := after["failed_payment_unrecovered p-failed|x-1"]; b.Status != "resolved" || b.Resolved != "r2" {
		t.Errorf("a rule that does not read the failed table still resolves: %+v", b)
	}
}

// TestPendingBecomesBreak: an item inside its grace period is pending, not a
// break; a later run past the grace reports it and clears it from pending.
func TestPendingBecomesBreak(t *testing.T) {
	db := newDB(t)
	fixture(t, db, map[string]string{"failure_conversions": `network_payment_id,execution_timestamp,ssa_remote_transfer_id,ssa_transfer_state,report_id
p-failed,2026-10-01T12:00:00Z,x-1,PENDING,rpt-failure
`})
	cat := builtin(t)
	w := raw.Window{From: day(0), To: day(0)}
	count := func(q string) (n int) {
		t.Helper()
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	res := apply(t, db, cat, rules.Run{ID: "r1", Window: w, AsOf: day(1).Add(11 * time.Hour)})
	if res.Pending["failed_payment_unrecovered"] != 1 || count(`SELECT count(*) FROM breaks`) != 0 || count(`SELECT count(*) FROM pending`) != 1 {
		t.Fatalf("inside grace: %+v", res)
	}
	res = apply(t, db, cat, rules.Run{ID: "r2", Window: w, AsOf: day(1).Add(12 * time.Hour)})
	if res.Found["failed_payment_unrecovered"] != 1 || count(`SELECT count(*) FROM breaks`) != 1 || count(`SELECT count(*) FROM pending`) != 0 {
		t.Fatalf("past grace: %+v", res)
	}
}

// TestApplyValidatesBeforeRunning: a problem in any rule, parameter or gap
// stops the run before any rule writes a break, and names the rule's file.
func TestApplyValidatesBeforeRunning(t *testing.T) {
	const head = "-- id: %s\n-- severity: P3\n-- description: d\n-- reads: payment_ops\n"
	custom := func(id, body string) rules.Rule {
		t.Helper()
		r, err := rules.Parse("custom/"+id+".sql", strings.Replace(head, "%s", id, 1)+body)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	good := "SELECT network_payment_id AS break_key, quote_ts AS event_at FROM payment_ops"
	tests := []struct {
		name   string
		extra  []rules.Rule
		params map[string]string
		gaps   []rules.Gap
		want   string
	}{
		{"unknown override", nil, map[string]string{"ops_missing_in_recon.nope": "1"}, nil, `"ops_missing_in_recon.nope" names no parameter`},
		{"override of no rule", nil, map[string]string{"nope.grace": "1 hour"}, nil, `"nope.grace" names no parameter`},
		{"bad value", nil, map[string]string{"fx_rate_outlier.threshold_bps": "two hundred"}, nil, `builtin/fx_rate_outlier.sql: param threshold_bps = "two hundred" is not a DECIMAL(38,12)`},
		{"bad interval", nil, map[string]string{"payment_missing_in_statement.grace": "soon"}, nil, `param grace = "soon" is not a INTERVAL`},
		{"undeclared table", []rules.Rule{custom("sneaky", good+" WHERE network_payment_id IN (SELECT network_payment_id FROM recon_transactions)")}, nil, nil,
			`custom/sneaky.sql:5: reads table "recon_transactions" without declaring it`},
		{"unknown column", []rules.Rule{custom("extra_col", "SELECT network_payment_id AS break_key, quote_ts AS event_at, 1 AS score FROM payment_ops")}, nil, nil,
			`custom/extra_col.sql: returns column "score"`},
		{"no event_at", []rules.Rule{custom("no_time", "SELECT network_payment_id AS break_key FROM payment_ops")}, nil, nil,
			`custom/no_time.sql: must return column "event_at"`},
		{"sql error", []rules.Rule{custom("typo", "SELEKT 1")}, nil, nil, `custom/typo.sql: Parser Error`},
		{"gap in unknown table", nil, nil, []rules.Gap{{Table: "nowhere", Window: raw.Window{From: day(0), To: day(0)}}}, `gap in unknown table "nowhere"`},
		{"repeated key", []rules.Rule{custom("twice", "SELECT 'k' AS break_key, quote_ts AS event_at FROM payment_ops")}, nil, nil,
			`rule twice (custom/twice.sql): 2 repeated break_key values`},
		{"outside the window", []rules.Rule{custom("early", "SELECT network_payment_id AS break_key, quote_ts - INTERVAL 2 DAY AS event_at FROM payment_ops")}, nil, nil,
			`rule early (custom/early.sql): 3 rows whose event_at is null or outside the window 2026-10-01..2026-10-01`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := newDB(t)
			fixture(t, db, map[string]string{"payment_ops": lifecycleOps})
			_, err := rules.Apply(t.Context(), db, append(builtin(t), tt.extra...), rules.Run{ID: "r1",
				Window: raw.Window{From: day(0), To: day(0)}, AsOf: day(3), Params: tt.params, Gaps: tt.gaps})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Apply error = %v, want it to contain %q", err, tt.want)
			}
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM breaks`).Scan(&n); err != nil || n != 0 {
				t.Errorf("%d breaks written by a run that failed validation (%v)", n, err)
			}
		})
	}
}

// TestRulesDirOverrides: a rule file in another folder replaces the built-in
// one of the same id and adds new ids; overridden parameters apply.
func TestRulesDirOverrides(t *testing.T) {
	local := fstest.MapFS{
		"fx_rate_outlier.sql": {Data: []byte("-- id: fx_rate_outlier\n-- severity: P2\n-- description: stricter\n-- reads: payment_ops\n" +
			"-- param: threshold_bps DECIMAL(38,12) = 10\nSELECT network_payment_id AS break_key, quote_ts AS event_at FROM payment_ops\n" +
			"WHERE quote_ts >= $window_start AND quote_ts < $window_end AND sent_amount > CAST($threshold_bps AS DECIMAL(38,12))\n")},
	}
	rs, err := rules.Load(rules.Builtin, rules.Dir{Name: "local", FS: local})
	if err != nil {
		t.Fatal(err)
	}
	db := newDB(t)
	fixture(t, db, map[string]string{"payment_ops": lifecycleOps})
	exec(t, db, `INSERT INTO recon_transactions (network_payment_id, report_id, source_file, source_line)
		SELECT network_payment_id, 'r', 'f', 1 FROM payment_ops`)
	res := apply(t, db, rs, rules.Run{ID: "r1", Window: raw.Window{From: day(0), To: day(0)}, AsOf: day(3),
		Params: map[string]string{"fx_rate_outlier.threshold_bps": "150"}})
	got := breaksByKey(t, db)
	if res.Found["fx_rate_outlier"] != 2 || got["fx_rate_outlier p-open"].Base != "P2" || got["fx_rate_outlier p-fixed"].ID != "" {
		t.Errorf("override: found %v, breaks %v", res.Found, got)
	}
}

// TestRulesRunAtTheirMemoryLimit: the rules see DuckDB's memory limit at
// reconsql.RulesMemoryLimit (512MB, 488.2 MiB), and the database's own
// (384MB) is back after.
func TestRulesRunAtTheirMemoryLimit(t *testing.T) {
	rs, err := rules.Load(rules.Dir{Name: "local", FS: fstest.MapFS{"limit.sql": {Data: []byte(
		"-- id: limit\n-- severity: P4\n-- description: the memory limit a rule sees\n-- reads: payment_ops\n" +
			"SELECT network_payment_id AS break_key, quote_ts AS event_at, current_setting('memory_limit') AS detail\n" +
			"FROM payment_ops WHERE quote_ts >= $window_start AND quote_ts < $window_end\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	db := newDB(t)
	fixture(t, db, map[string]string{"payment_ops": lifecycleOps})
	apply(t, db, rs, rules.Run{ID: "r1", Window: raw.Window{From: day(0), To: day(0)}, AsOf: day(3)})
	var during, after string
	if err := db.QueryRow(`SELECT min(detail), current_setting('memory_limit') FROM breaks`).Scan(&during, &after); err != nil {
		t.Fatal(err)
	}
	if during != "488.2 MiB" || after != "366.2 MiB" {
		t.Errorf("memory limit during the rules %q, after %q; want 488.2 MiB, then 366.2 MiB", during, after)
	}
}

// TestManyBreaksMergeWithinTheMemoryLimit: 200,000 breaks at a 96 MB limit
// are recorded (new), seen again (persisting) and resolved. Merged with an
// upsert they ran out of memory the first night; updated in place, 120,000
// did the second.
func TestManyBreaksMergeWithinTheMemoryLimit(t *testing.T) {
	const n = 200000
	rule := func(rows int) []rules.Rule {
		rs, err := rules.Load(rules.Dir{Name: "local", FS: fstest.MapFS{"many.sql": {Data: []byte(fmt.Sprintf(
			"-- id: many\n-- severity: P3\n-- description: a break a row\n-- reads: payment_ops\n"+
				"SELECT 'key-' || i || repeat('x', 40) AS break_key, $window_start AS event_at, 'p-' || i AS payment_id,\n"+
				"    CAST(i AS DECIMAL(38,12)) AS expected, 'detail of break ' || i || repeat(' padding', 12) AS detail\n"+
				"FROM range(%d) r(i), (SELECT count(*) FROM payment_ops)\n", rows))}}})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	db := newDB(t)
	fixture(t, db, map[string]string{"payment_ops": lifecycleOps})
	rules.SetMemoryLimit(t, "96MB")
	w := raw.Window{From: day(0), To: day(0)}
	count := func() map[string]int {
		got := map[string]int{}
		rows, err := db.Query(`SELECT status, count(*) FROM breaks GROUP BY status`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			var c int
			if err := rows.Scan(&s, &c); err != nil {
				t.Fatal(err)
			}
			got[s] = c
		}
		return got
	}
	for i, c := range []struct {
		rows     int
		want     map[string]int
		resolved int64
	}{
		{n, map[string]int{"new": n}, 0},
		{n, map[string]int{"persisting": n}, 0},
		{0, map[string]int{"resolved": n}, n},
	} {
		res, err := rules.Apply(t.Context(), db, rule(c.rows), rules.Run{ID: fmt.Sprintf("r%d", i+1), Window: w, AsOf: day(i + 1)})
		if err != nil {
			t.Fatalf("night %d: %v", i+1, err)
		}
		if got := count(); !cmp.Equal(got, c.want) || res.Resolved != c.resolved {
			t.Errorf("night %d: breaks by status %v, resolved %d; want %v, %d", i+1, got, res.Resolved, c.want, c.resolved)
		}
	}
}

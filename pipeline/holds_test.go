package pipeline_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/output"
	"recon/pipeline"
	"recon/rules"
	reconsql "recon/sql"
)

// TestFailedSourcesHoldTheirRules runs the pipeline three times over one
// database, against sandboxes of the same seed and clock (faults never change
// the data):
//
//  1. the liquidation service and the payments list are down: the rules that
//     read those tables are held, so none invents a break from the missing
//     side (liquidation_missing would report every received payment); every
//     other rule finds exactly its truth;
//  2. every source answers: exactly the truth;
//  3. every report FAILED and the same services down: the breaks and pending
//     items of every held rule stay exactly as run 2 left them (none
//     resolved, none touched), and the one rule that reads only statements
//     goes on.
func TestFailedSourcesHoldTheirRules(t *testing.T) {
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 6))
	down := []string{"GET /liquidations", "GET /v4/payments"}
	first := newEnv(t, 7, sandbox.Faults{Down: down})
	complete := newEnv(t, 7)
	reportsFailed := newEnv(t, 7, sandbox.Faults{Down: down, FailedReports: 1})
	for _, e := range []*env{complete, reportsFailed} {
		e.cfg.DB, e.cfg.ArchiveURL, e.cfg.WorkDir, e.cfg.Now = first.cfg.DB, first.cfg.ArchiveURL, first.cfg.WorkDir, first.cfg.Now
	}
	truth := first.sb.Truth()

	// heldBy lists the rules reading any of tables; only returns the truth's items of the other rules.
	heldBy := func(tables ...string) map[string]bool {
		rs, err := rules.Load(rules.Builtin)
		if err != nil {
			t.Fatal(err)
		}
		held := map[string]bool{}
		for _, r := range rs {
			held[r.ID] = slices.ContainsFunc(r.Reads, func(t string) bool { return slices.Contains(tables, t) })
		}
		return held
	}
	only := func(items []sandbox.TruthBreak, held map[string]bool) []key {
		var ks []key
		for _, b := range items {
			if !held[b.RuleID] {
				ks = append(ks, key{b.RuleID, b.PaymentID, b.Account})
			}
		}
		return sortKeys(ks)
	}
	open, pending := func() []key { return keys(t, first.cfg.DB, keysFrom+`breaks WHERE status <> 'resolved'`) },
		func() []key { return keys(t, first.cfg.DB, keysFrom+"pending") }
	wantHolds := func(res *pipeline.Result, held map[string]bool, table map[string]string) {
		t.Helper()
		if res.Verdict != output.Incomplete {
			t.Errorf("verdict %s, want incomplete", res.Verdict)
		}
		for rule, h := range held {
			if found := slices.ContainsFunc(res.Reasons, func(r string) bool { return strings.HasPrefix(r, "rule "+rule+" held for ") }); found != h {
				t.Errorf("rule %s held %v, want %v", rule, found, h)
			}
		}
		for source, why := range table {
			if !slices.ContainsFunc(res.Reasons, func(r string) bool { return strings.HasPrefix(r, source) && strings.Contains(r, why) }) {
				t.Errorf("no reason says %s %s: %q", source, why, res.Reasons)
			}
		}
	}

	// 1. Liquidations and server API payments not pulled.
	held := heldBy("liquidations", "liquidation_trades", "trade_executions", "payments")
	for _, r := range []string{"liquidation_missing", "liquidation_amount_mismatch", "liquidation_not_delivered", "liquidation_stuck",
		"payment_state_mismatch", "payment_stale", "statement_entry_without_payment"} {
		if !held[r] {
			t.Fatalf("%s does not read the sources that are down", r)
		}
	}
	res := first.run(t, w)
	wantHolds(res, held,
		map[string]string{"liquidation 2026-10-01..2026-10-08": "not pulled", "payment 2026-10-01..2026-10-08": "not pulled"})
	if diff := cmp.Diff(only(truth.Breaks, held), open()); diff != "" {
		t.Errorf("run 1: breaks differ from the truth of the rules not held (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(only(truth.Pending, held), pending()); diff != "" {
		t.Errorf("run 1: pending items differ from the truth of the rules not held (-want +got):\n%s", diff)
	}

	// 2. Every source answers.
	res = complete.run(t, w)
	if res.Verdict != output.Complete {
		t.Fatalf("run 2: verdict %s: %v", res.Verdict, res.Reasons)
	}
	if diff := cmp.Diff(only(truth.Breaks, nil), open()); diff != "" {
		t.Fatalf("run 2: breaks differ from the truth (-want +got):\n%s", diff)
	}
	before, pendingBefore := breakRows(t, first.cfg.DB), pending()

	// 3. Every report FAILED, and the same services down.
	held = heldBy("payment_ops", "recon_transactions", "failure_conversions", "liquidations", "payments")
	if held["statement_balance_chain_break"] || !held["ops_missing_in_recon"] {
		t.Fatalf("held rules %v", held)
	}
	res = reportsFailed.run(t, w)
	wantHolds(res, held, map[string]string{"report PAYMENT_OPS": "FAILED 2 times"})
	if res.Resolved != 0 {
		t.Errorf("run 3 resolved %d breaks", res.Resolved)
	}
	after := breakRows(t, first.cfg.DB)
	if len(after) != len(before) {
		t.Fatalf("run 3 left %d breaks, run 2 %d", len(after), len(before))
	}
	for id, b := range after {
		was := before[id]
		switch {
		case held[b.Rule] && b != was:
			t.Errorf("held rule %s: break changed from %+v to %+v", b.Rule, was, b)
		case !held[b.Rule] && (b.Status != "persisting" || b.LastSeen != res.RunID):
			t.Errorf("rule %s is not held but its break was not seen again: %+v", b.Rule, b)
		}
	}
	if diff := cmp.Diff(pendingBefore, pending()); diff != "" {
		t.Errorf("run 3 changed pending items (-run 2 +run 3):\n%s", diff)
	}
}

// heldRow is a break as the hold test compares it between runs.
type heldRow struct{ Rule, Status, LastSeen, Resolved string }

func breakRows(t *testing.T, dbPath string) map[string]heldRow {
	t.Helper()
	db, err := reconsql.OpenDB(dbPath, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT break_id, rule_id, status, last_seen_run, coalesce(resolved_run, '') FROM breaks`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]heldRow{}
	for rows.Next() {
		var id string
		var r heldRow
		if err := rows.Scan(&id, &r.Rule, &r.Status, &r.LastSeen, &r.Resolved); err != nil {
			t.Fatal(err)
		}
		out[id] = r
	}
	return out
}

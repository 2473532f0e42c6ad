package rules_test

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"recon/extract/raw"
	"recon/rules"
)

// event is a person's action on a break of rule ops_missing_in_recon, with
// the break's snapshot as the published file shows it.
func event(t *testing.T, db *sql.DB, id, key, action, until string, at time.Time) rules.Event {
	t.Helper()
	e := rules.Event{ID: id, BreakID: stableID("ops_missing_in_recon", key), Action: action, Workflow: rules.Actions[action],
		Reason: action + " " + key, Actor: "alice", At: at, Until: until}
	if err := db.QueryRow(`SELECT b.status, b.severity, b.currency, CAST(b.difference AS VARCHAR), coalesce(b.account, ''),
			coalesce(w.workflow_status, 'open')
		FROM breaks b LEFT JOIN break_workflow w USING (break_id) WHERE break_id = ?`, e.BreakID).Scan(
		&e.BreakStatus, &e.Severity, &e.Currency, &e.Amount, &e.Counterpart, &e.PrevWorkflow); err != nil {
		t.Fatalf("break %s: %v", key, err)
	}
	return e
}

func appendEvents(t *testing.T, db *sql.DB, run string, events ...rules.Event) {
	t.Helper()
	for i := range events {
		events[i].Origin, events[i].AppliedRun = rules.OriginJournal, run
	}
	if _, err := rules.AppendEvents(t.Context(), db, events); err != nil {
		t.Fatal(err)
	}
}

// workflowOf returns each break's workflow status, last reason and last actor, by break key.
func workflowOf(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT b.break_key, coalesce(w.workflow_status, 'open') || ' | ' || coalesce(w.last_reason, '') ||
			' | ' || coalesce(w.last_by, '') || ' | ' || b.severity || coalesce(' ' || b.escalation, '')
		FROM breaks b LEFT JOIN break_workflow w USING (break_id)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// TestWorkflow: acknowledged breaks do not escalate until the second
// threshold; an explained break is reopened by the run that sees its amount
// change ("changed since explained") or by the first run after its --until
// day; a written-off break stays closed; every event is chained.
func TestWorkflow(t *testing.T) {
	db := newDB(t)
	fixture(t, db, map[string]string{"payment_ops": lifecycleOps + "p-late,2026-10-01T13:00:00Z,COMPLETED,300.00,USD,rpt-ops\n"})
	cat := builtin(t)
	w := raw.Window{From: day(0), To: day(0)}
	run := func(id string, asOf time.Time) {
		t.Helper()
		apply(t, db, cat, rules.Run{ID: id, Window: w, AsOf: asOf,
			Params: map[string]string{"ops_missing_in_recon.escalate_acknowledged_after_days": "10"}})
	}
	run("r1", day(1))
	appendEvents(t, db, "r2",
		event(t, db, "e1", "p-open", rules.ActionAck, "", day(1)),
		event(t, db, "e2", "p-fixed", rules.ActionExplain, "", day(1)),
		event(t, db, "e3", "p-big", rules.ActionWriteoff, "", day(1)),
		event(t, db, "e4", "p-late", rules.ActionExplain, "2026-10-05", day(1)))
	// p-fixed's amount changes before the next run.
	exec(t, db, `UPDATE payment_ops SET sent_amount = 120 WHERE network_payment_id = 'p-fixed'`)

	// Run 2, a week after run 1: p-open, acknowledged and 7 days old, is not
	// escalated by age (escalate_after_days 5) below the second threshold (10).
	run("r2", day(8))
	got := workflowOf(t, db)
	want := map[string]string{
		"p-open":  "acknowledged | ack p-open | alice | P2",
		"p-fixed": "open | changed since explained: amount -100 -> -120 | recon | P1 age",
		"p-big":   "written_off | writeoff p-big | alice | P1 amount, age",
		"p-late":  "open | explanation expired (explained until 2026-10-05) | recon | P1 age",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("after run 2, %s = %q, want %q", k, got[k], v)
		}
	}
	// Past the second threshold an acknowledged break escalates again.
	run("r3", day(13))
	if got := workflowOf(t, db)["p-open"]; got != "acknowledged | ack p-open | alice | P1 age" {
		t.Errorf("after run 3, p-open = %q, want escalated by age", got)
	}
	// A replayed event (same id) is not applied twice; reopen undoes a write-off.
	appendEvents(t, db, "r4", event(t, db, "e1", "p-open", rules.ActionAck, "", day(13)),
		event(t, db, "e5", "p-big", rules.ActionReopen, "", day(13)))
	if got := workflowOf(t, db)["p-big"]; !strings.HasPrefix(got, "open | reopen p-big | alice") {
		t.Errorf("p-big after reopen = %q", got)
	}
	n, err := rules.Verify(t.Context(), db)
	if err != nil || n != 7 {
		t.Fatalf("verify: %d events, %v; want 7 and an intact chain", n, err)
	}
}

// TestChainDetectsTampering changes, then removes, an event: Verify names the first bad one.
func TestChainDetectsTampering(t *testing.T) {
	db := newDB(t)
	fixture(t, db, map[string]string{"payment_ops": lifecycleOps})
	apply(t, db, builtin(t), rules.Run{ID: "r1", Window: raw.Window{From: day(0), To: day(0)}, AsOf: day(1)})
	appendEvents(t, db, "r2",
		event(t, db, "e1", "p-open", rules.ActionAck, "", day(1)),
		event(t, db, "e2", "p-fixed", rules.ActionWriteoff, "", day(1)),
		event(t, db, "e3", "p-big", rules.ActionAck, "", day(1)))
	if _, err := rules.Verify(t.Context(), db); err != nil {
		t.Fatalf("intact chain: %v", err)
	}
	for _, tt := range []struct {
		name, tamper string
		seq          int64
		problem      string
	}{
		{"reason changed", `UPDATE break_events SET reason = 'nothing to see' WHERE seq = 2`, 2, "hash does not match"},
		{"amount changed, hash recomputed by hand", `UPDATE break_events SET amount = 0, hash = sha256('x') WHERE seq = 2`, 2, "hash does not match"},
		{"event removed", `DELETE FROM break_events WHERE seq = 2`, 3, "an event is missing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := tx.Exec(tt.tamper); err != nil {
				t.Fatal(err)
			}
			_, err = rules.Verify(t.Context(), tx)
			var ce *rules.ChainError
			if !errors.As(err, &ce) || ce.Seq != tt.seq || !strings.Contains(ce.Problem, tt.problem) {
				t.Errorf("verify: %v, want a chain error at seq %d (%s)", err, tt.seq, tt.problem)
			}
		})
	}
}

// TestAppendEventsInChunks: events are looked up and inserted a chunk at a
// time (3 here), and the chain is the one event at a time would give: an id
// already applied, or given twice, is added once; journal offsets, amounts
// and --until days are kept; Verify recomputes every hash.
func TestAppendEventsInChunks(t *testing.T) {
	rules.SetEventChunk(t, 3)
	db := newDB(t)
	at := time.Date(2026, 11, 2, 9, 30, 0, 123456789, time.UTC)
	ev := func(id string, offset int64) rules.Event {
		e := rules.Event{ID: id, BreakID: "b-" + id, Action: rules.ActionExplain, Workflow: rules.WorkflowExplained,
			PrevWorkflow: rules.WorkflowOpen, Reason: "bulk " + id, Actor: "alice", At: at, Until: "2026-11-30",
			BreakStatus: "new", Severity: "P2", Currency: "USD", Amount: "12.500", Origin: rules.OriginJournal, AppliedRun: "r1"}
		if offset >= 0 {
			e.JournalOffset = &offset
		}
		return e
	}
	if n, err := rules.AppendEvents(t.Context(), db, []rules.Event{ev("e1", 0), ev("e2", -1)}); err != nil || n != 2 {
		t.Fatalf("first append: %d, %v", n, err)
	}
	var batch []rules.Event
	for i := range 8 {
		batch = append(batch, ev(fmt.Sprintf("f%d", i), int64(100+i)))
	}
	batch = append(batch[:4], append([]rules.Event{ev("e2", 7), ev("f1", 9)}, batch[4:]...)...) // applied before; given twice
	n, err := rules.AppendEvents(t.Context(), db, batch)
	if err != nil || n != 8 {
		t.Fatalf("second append: %d events, %v; want 8", n, err)
	}
	if n, err := rules.Verify(t.Context(), db); err != nil || n != 10 {
		t.Fatalf("verify: %d events, %v; want 10 in an intact chain", n, err)
	}
	rows, err := db.Query(`SELECT seq, event_id, coalesce(journal_offset, -1), CAST(amount AS VARCHAR), CAST(until_date AS VARCHAR),
			acted_at = TIMESTAMPTZ '2026-11-02 09:30:00.123456+00'
		FROM break_events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var seq, offset int64
		var id, amount, until string
		var sameAt bool
		if err := rows.Scan(&seq, &id, &offset, &amount, &until, &sameAt); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s %d %s %s %v", seq, id, offset, amount, until, sameAt))
	}
	want := []string{"1 e1 0 12.500000000000 2026-11-30 true", "2 e2 -1 12.500000000000 2026-11-30 true"}
	for i := range 8 {
		want = append(want, fmt.Sprintf("%d f%d %d 12.500000000000 2026-11-30 true", 3+i, i, 100+i))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("break_events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

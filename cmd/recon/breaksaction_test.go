package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"recon/pipeline"
	"recon/rules"
	reconsql "recon/sql"
)

// publishBreaks publishes a database with four open breaks (and a resolved
// one) and points RECON_DB at it.
func publishBreaks(t *testing.T) string {
	t.Helper()
	hermetic(t)
	db := filepath.Join(t.TempDir(), "recon.duckdb")
	t.Setenv("RECON_DB", db)
	wh, err := pipeline.OpenWarehouse(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{
		"('b-p1-old', 'payment_missing_in_statement', 'P1', 'persisting', 12, -10.5)",
		"('b-p1-new', 'payment_missing_in_statement', 'P1', 'new', 0, 20)",
		"('b-p2-old', 'ops_missing_in_recon', 'P2', 'persisting', 9, -300)",
		"('b-p1-fx', 'fx_rate_outlier', 'P1', 'persisting', 3, 1)",
		"('b-gone', 'ops_missing_in_recon', 'P1', 'resolved', 20, 5)",
	} {
		if _, err := wh.DB.Exec(`INSERT INTO breaks (break_id, rule_id, severity, status, age_days, difference, break_key,
				event_date, currency, account, first_seen_run, first_seen_at, last_seen_run)
			SELECT *, 'k', DATE '2026-10-01', 'USD', 'acme@x', 'r1', TIMESTAMPTZ '2026-10-02 06:00:00Z', 'r1' FROM (VALUES ` + b + `)`); err != nil {
			t.Fatal(err)
		}
	}
	if err := wh.Publish(t.Context()); err != nil {
		t.Fatal(err)
	}
	return db
}

func journalLines(t *testing.T, db string) []pipeline.JournalLine {
	t.Helper()
	lines, err := pipeline.ReadJournal(pipeline.JournalPath(db))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.Err != nil {
			t.Errorf("journal line at %d: %v", l.Offset, l.Err)
		}
	}
	return lines
}

// TestBreaksActions: each action by id and by selection, --dry-run, the
// checks that journal nothing, and the listing's pending column. The writer
// lock held by a run does not stop an action.
func TestBreaksActions(t *testing.T) {
	db := publishBreaks(t)
	lock, err := pipeline.TryLock(pipeline.WriterLockPath(db), "recon run (test)", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()

	// Checks: nothing is journalled.
	for _, args := range [][]string{
		{"breaks", "ack", "b-p1-old"},                                               // no reason
		{"breaks", "ack", "--reason", "x"},                                          // no break named or selected
		{"breaks", "ack", "no-such-break", "b-p1-old", "--reason", "x"},             // unknown id
		{"breaks", "ack", "b-p1-old", "--reason", "x", "--until", "2999-01-01"},     // --until is explain's
		{"breaks", "explain", "b-p1-old", "--reason", "x", "--until", "2020-01-01"}, // in the past
		{"breaks", "explain", "b-p1-old", "--reason", "x", "--until", "soon"},       // not a date
		{"breaks", "writeoff", "--severity", "P9", "--reason", "x"},                 // bad severity
		{"breaks", "writeoff", "--older-than", "a week", "--reason", "x"},           // bad age
	} {
		if code, _, stderr := run(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, stderr)
		}
	}
	if n := len(journalLines(t, db)); n != 0 {
		t.Fatalf("%d lines journalled by refused commands", n)
	}

	// A dry run of a selection: open P1s older than 2 days, of two rules.
	sel := []string{"--severity", "P1", "--older-than", "2d", "--rule", "payment_missing_in_statement,fx_rate_outlier"}
	code, out, _ := run(t, append([]string{"breaks", "explain", "--reason", "timing", "--until", "2999-12-31", "--dry-run"}, sel...)...)
	if code != exitOK || !strings.Contains(out, "b-p1-old") || !strings.Contains(out, "b-p1-fx") || strings.Contains(out, "b-p1-new") ||
		strings.Contains(out, "b-gone") || !strings.Contains(out, "would explain: open -> explained") || !strings.Contains(out, "2 of 2") {
		t.Errorf("dry run: exit %d\n%s", code, out)
	}
	if n := len(journalLines(t, db)); n != 0 {
		t.Fatalf("the dry run journalled %d lines", n)
	}

	// The same for real, then each other action by id.
	if code, out, stderr := run(t, append([]string{"breaks", "explain", "--reason", "timing: booked on the 2nd", "--until", "2999-12-31", "--by", "carol"}, sel...)...); code != exitOK {
		t.Fatalf("explain: exit %d\n%s%s", code, out, stderr)
	}
	for _, args := range [][]string{
		{"breaks", "ack", "b-p2-old", "b-p1-new", "--reason", "seen", "--by", "dave"},
		{"breaks", "writeoff", "b-p1-new", "--reason", "written off, ticket FIN-123", "--by", "dave"},
		{"breaks", "reopen", "b-p1-fx", "--reason", "not timing after all", "--by", "erin"},
	} {
		if code, out, stderr := run(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	// Already acknowledged (pending), and resolved: skipped, nothing journalled.
	code, out, _ = run(t, "breaks", "ack", "b-p2-old", "b-gone", "--reason", "again")
	if code != exitOK || !strings.Contains(out, "skipped: already acknowledged") || !strings.Contains(out, "skipped: resolved") {
		t.Errorf("ack again: exit %d\n%s", code, out)
	}

	var got []string
	for _, l := range journalLines(t, db) {
		e := l.Event
		got = append(got, strings.Join([]string{e.BreakID, e.Action, e.PrevWorkflow, e.Workflow, e.Actor, e.Reason, e.Until, e.Amount, e.BreakStatus}, " | "))
	}
	want := []string{
		"b-p1-fx | explain | open | explained | carol | timing: booked on the 2nd | 2999-12-31 | 1 | persisting",
		"b-p1-old | explain | open | explained | carol | timing: booked on the 2nd | 2999-12-31 | -10.5 | persisting",
		"b-p1-new | ack | open | acknowledged | dave | seen |  | 20 | new",
		"b-p2-old | ack | open | acknowledged | dave | seen |  | -300 | persisting",
		"b-p1-new | writeoff | acknowledged | written_off | dave | written off, ticket FIN-123 |  | 20 | new",
		"b-p1-fx | reopen | explained | open | erin | not timing after all |  | 1 | persisting",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("journal:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The listing shows the pending actions and says how they are applied.
	code, out, stderr := run(t, "breaks", "--format", "csv")
	if code != exitOK || !strings.Contains(out, "writeoff by dave at ") || !strings.Contains(stderr, "6 workflow actions") ||
		!strings.Contains(stderr, "the next run") {
		t.Errorf("listing: exit %d\n%s\n%s", code, out, stderr)
	}
}

// TestBreaksVerify: an intact chain exits 0; a changed event exits 1 naming it.
func TestBreaksVerify(t *testing.T) {
	db := publishBreaks(t)
	wh, err := pipeline.OpenWarehouse(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 10, 3, 9, 0, 0, 0, time.UTC)
	var events []rules.Event
	for i, id := range []string{"b-p1-old", "b-p1-new", "b-p2-old"} {
		events = append(events, rules.Event{ID: "e" + string(rune('1'+i)), BreakID: id, Action: "ack", Workflow: "acknowledged",
			PrevWorkflow: "open", Reason: "seen", Actor: "dave", At: at, Origin: rules.OriginJournal, AppliedRun: "r2"})
	}
	if _, err := rules.AppendEvents(t.Context(), wh.DB, events); err != nil {
		t.Fatal(err)
	}
	if err := wh.Publish(t.Context()); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := run(t, "breaks", "verify"); code != exitOK || !strings.Contains(out, "3 events, chain intact") {
		t.Fatalf("verify: exit %d\n%s%s", code, out, stderr)
	}
	// Someone opens the file read-write and rewrites a reason.
	conn, err := reconsql.OpenDB(db, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `UPDATE break_events SET reason = 'fine' WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(`CHECKPOINT`); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	os.Remove(db + ".wal")
	code, _, stderr := run(t, "breaks", "verify")
	if code != exitError || !strings.Contains(stderr, "seq 2 (event_id e2, break b-p1-new)") || !strings.Contains(stderr, "hash does not match") {
		t.Errorf("verify of a tampered chain: exit %d\n%s", code, stderr)
	}
}

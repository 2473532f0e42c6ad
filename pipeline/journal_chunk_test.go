package pipeline

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"recon/output"
	"recon/rules"
	reconsql "recon/sql"
)

// TestJournalAppliedInChunks: a journal is applied a few lines at a time (3
// here) in one transaction, with the result of applying it whole: a line
// already applied, an invalid line and a blank one are skipped, an id given
// again in a later chunk is added once, a torn last line is left, and the
// run's copy holds exactly the lines it applied. PendingEvents reads the
// same chunks.
func TestJournalAppliedInChunks(t *testing.T) {
	prev := journalChunk
	journalChunk = 3
	t.Cleanup(func() { journalChunk = prev })

	dir := t.TempDir()
	db, err := reconsql.OpenDB(filepath.Join(dir, "recon.duckdb"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := reconsql.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	ev := func(id string) rules.Event {
		return rules.Event{ID: id, BreakID: "b-" + id, Action: rules.ActionAck, Workflow: rules.WorkflowAcknowledged,
			PrevWorkflow: rules.WorkflowOpen, Reason: "bulk", Actor: "alice", At: at, BreakStatus: "new", Severity: "P2"}
	}
	if _, err := rules.AppendEvents(t.Context(), db, []rules.Event{ev("a0")}); err != nil {
		t.Fatal(err)
	}
	line := func(id string) string {
		b, err := json.Marshal(ev(id))
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	lines := []string{line("a0"), "{not an event}\n", line("a1"), line("a2"), "\n", line("a3"), line("a4"), line("a3"),
		line("a5"), line("a6")}
	text := strings.Join(lines, "") + strings.TrimSuffix(line("a7"), "\n")
	journal := filepath.Join(dir, "recon.duckdb.journal")
	if err := os.WriteFile(journal, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "run")
	if err := os.MkdirAll(filepath.Join(runDir, output.InputsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	pending := func(db rules.Querier) string {
		events, err := PendingEvents(t.Context(), db, journal)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range events {
			ids = append(ids, e.ID)
		}
		return strings.Join(ids, " ")
	}
	if got, want := pending(nil), "a0 a1 a2 a3 a4 a3 a5 a6"; got != want {
		t.Errorf("pending without a database: %s, want %s", got, want)
	}
	if got, want := pending(db), "a1 a2 a3 a4 a3 a5 a6"; got != want {
		t.Errorf("pending before the run: %s, want %s", got, want)
	}
	n, err := applyJournal(t.Context(), db, journal, runDir, "r2", slog.New(slog.DiscardHandler))
	if err != nil || n != 6 {
		t.Fatalf("applied %d events, %v; want 6", n, err)
	}
	if n, err := rules.Verify(t.Context(), db); err != nil || n != 7 {
		t.Fatalf("verify: %d events, %v; want 7 in an intact chain", n, err)
	}
	rows, err := db.Query(`SELECT event_id, coalesce(journal_offset, -1), applied_run FROM break_events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id, run string
		var offset int64
		if err := rows.Scan(&id, &offset, &run); err != nil {
			t.Fatal(err)
		}
		got = append(got, id+" "+run)
		if offset >= 0 && !strings.HasPrefix(text[offset:], `{"event_id":"`+id+`"`) {
			t.Errorf("%s: journal_offset %d points at %.30q", id, offset, text[offset:])
		}
	}
	want := "a0 \na1 r2\na2 r2\na3 r2\na4 r2\na5 r2\na6 r2"
	if strings.Join(got, "\n") != want {
		t.Errorf("break_events:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if got := pending(db); got != "" {
		t.Errorf("pending after the run: %s", got)
	}
	copied, err := os.ReadFile(filepath.Join(runDir, filepath.FromSlash(JournalName)))
	if err != nil {
		t.Fatal(err)
	}
	if wantCopy := line("a1") + line("a2") + line("a3") + line("a4") + line("a5") + line("a6"); !bytes.Equal(copied, []byte(wantCopy)) {
		t.Errorf("the run's copy:\n%s\nwant:\n%s", copied, wantCopy)
	}
}

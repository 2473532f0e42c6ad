package pipeline_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
	"recon/pipeline"
	"recon/rules"
	reconsql "recon/sql"
)

// stageHook calls fn once, when the run logs the start of a stage.
type stageHook struct {
	stage string
	fn    func()
	once  *sync.Once
}

func (h stageHook) Enabled(context.Context, slog.Level) bool { return true }
func (h stageHook) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h stageHook) WithGroup(string) slog.Handler            { return h }
func (h stageHook) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "stage started" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "stage" && a.Value.String() == h.stage {
			h.once.Do(h.fn)
		}
		return true
	})
	return nil
}

// openBreakIDs returns up to n unresolved break ids of the published file.
func openBreakIDs(t *testing.T, db string, n int) []string {
	t.Helper()
	conn := openRO(t, db)
	defer conn.Close() // before the next run publishes the file
	ids := column(t, conn, `SELECT break_id FROM breaks WHERE status <> 'resolved' ORDER BY break_id LIMIT ?`, n)
	if len(ids) != n {
		t.Fatalf("%d open breaks, want %d", len(ids), n)
	}
	return ids
}

func journal(t *testing.T, db, id, breakID, action string) {
	t.Helper()
	e := rules.Event{ID: id, BreakID: breakID, Action: action, Workflow: rules.Actions[action], PrevWorkflow: "open",
		Reason: "because " + id, Actor: "alice", At: now, BreakStatus: "new", Severity: "P1", Currency: "USD", Amount: "1"}
	if err := pipeline.AppendJournal(t.Context(), pipeline.JournalPath(db), []rules.Event{e}); err != nil {
		t.Fatal(err)
	}
}

// workflowRows returns break_id -> "workflow_status applied_run" of every break with events.
func workflowRows(t *testing.T, db string) map[string]string {
	t.Helper()
	conn, err := reconsql.OpenDB(db, true)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(`SELECT break_id, workflow_status || ' ' || applied_run FROM break_events`)
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

// TestJournalledActionsAcrossRuns: an action journalled between runs is
// applied by the next run; one journalled while a run is in its rules stage
// (after it read the journal) is not half-applied by it but applied, whole,
// by the run after; a run that fails applies nothing and loses nothing. The
// runs that applied events replay byte for byte.
func TestJournalledActionsAcrossRuns(t *testing.T) {
	e := newEnv(t, 3)
	w := raw.Window{From: day0, To: day0.AddDate(0, 0, 1)}
	e.run(t, w)
	ids := openBreakIDs(t, e.cfg.DB, 3)
	journal(t, e.cfg.DB, "ev-1", ids[0], rules.ActionAck)

	// A run that applies ev-1 but then fails to publish (a .wal appears
	// beside the published file) leaves it unapplied.
	bad := e.cfg
	bad.Logger = slog.New(stageHook{stage: "report", once: new(sync.Once), fn: func() {
		if err := os.WriteFile(e.cfg.DB+".wal", []byte("an analyst's writes"), 0o644); err != nil {
			t.Error(err)
		}
	}})
	if _, err := pipeline.Run(context.Background(), bad, w); err == nil || !strings.Contains(err.Error(), ".wal exists") {
		t.Fatalf("run whose publish is refused: %v", err)
	}
	if err := os.Remove(e.cfg.DB + ".wal"); err != nil {
		t.Fatal(err)
	}
	if got := workflowRows(t, e.cfg.DB); len(got) != 0 {
		t.Fatalf("a failed run applied events: %v", got)
	}

	// Run 2 applies ev-1; ev-2 is journalled while it runs its rules.
	cfg := e.cfg
	cfg.Logger = slog.New(stageHook{stage: "rules", once: new(sync.Once), fn: func() {
		journal(t, e.cfg.DB, "ev-2", ids[1], rules.ActionWriteoff)
	}})
	second, err := pipeline.Run(context.Background(), cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{ids[0]: "acknowledged " + second.RunID}, workflowRows(t, e.cfg.DB)); diff != "" {
		t.Errorf("after run 2 (-want +got):\n%s", diff)
	}
	if second.Open-second.Unhandled != 1 {
		t.Errorf("run 2: %d open, %d unhandled; want the acknowledged one apart", second.Open, second.Unhandled)
	}
	archived := string(archivedFile(t, e.cfg.ArchiveURL, second.RunID, pipeline.JournalName))
	if !strings.Contains(archived, `"ev-1"`) || strings.Contains(archived, `"ev-2"`) || strings.Count(archived, "\n") != 1 {
		t.Errorf("run 2's inputs/journal.jsonl:\n%s", archived)
	}

	// Run 3 applies ev-2, and only it.
	later := now.Add(time.Hour)
	e.cfg.Now = func() time.Time { later = later.Add(time.Second); return later }
	third := e.run(t, w)
	want := map[string]string{ids[0]: "acknowledged " + second.RunID, ids[1]: "written_off " + third.RunID}
	if diff := cmp.Diff(want, workflowRows(t, e.cfg.DB)); diff != "" {
		t.Errorf("after run 3 (-want +got):\n%s", diff)
	}
	breaks := string(archivedFile(t, e.cfg.ArchiveURL, third.RunID, "breaks.csv"))
	for _, s := range []string{",workflow_status,last_reason,last_by\r\n", ",acknowledged,because ev-1,alice\r\n", ",written_off,because ev-2,alice\r\n"} {
		if !strings.Contains(breaks, s) {
			t.Errorf("run 3's breaks.csv lacks %q", s)
		}
	}
	for _, res := range []*pipeline.Result{second, third} {
		r, err := replay(t, e.cfg.ArchiveURL, res.RunID)
		if err != nil || !r.Identical() {
			t.Fatalf("replay %s: %v %+v", res.RunID, err, r)
		}
	}
	if _, err := os.Stat(pipeline.JournalPath(e.cfg.DB)); err != nil {
		t.Errorf("journal: %v", err)
	}
}

package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"recon/output"
	"recon/rules"
)

// The journal is how a person's workflow action (recon breaks ack, explain,
// writeoff, reopen) reaches the warehouse without waiting on a run or on an
// analyst: the command appends the event as one JSON line to <db>.journal
// (under <db>.journal.lock, held while it writes and syncs), and every run
// applies the lines it has not applied yet into break_events inside its
// working copy, before the rules, and archives them as inputs/journal.jsonl.
// A run that fails publishes nothing, so its lines are applied by the next
// one; a line appended during a run is applied by the next run.

// JournalPath is the journal of db.
func JournalPath(db string) string { return db + ".journal" }

// journalLockWait bounds the wait for another command's append.
const journalLockWait = 10 * time.Second

// JournalLine is one line of a journal.
type JournalLine struct {
	Offset int64 // byte offset of the line in the file
	Raw    []byte
	Event  rules.Event
	Err    error // the line is not a valid event
}

// AppendJournal appends events to the journal at path, one JSON line each,
// and syncs the file. Every event is checked before anything is written; the
// lines are then streamed through a buffer (a bulk action's 600,000 lines
// built whole took 300 MB and more). A reader meanwhile sees complete lines
// only, and takes a last line without its newline for one being written. A
// write that fails part way leaves the lines before it, as a crash would. A
// line torn by a crash of an earlier append is closed by a newline first,
// so it stays one unreadable line.
func AppendJournal(ctx context.Context, path string, events []rules.Event) error {
	for _, e := range events {
		if err := checkEvent(e); err != nil {
			return err
		}
	}
	lctx, cancel := context.WithTimeout(ctx, journalLockWait)
	defer cancel()
	lock := flock.New(path+".lock", flock.SetPermissions(0o644))
	if ok, err := lock.TryLockContext(lctx, 10*time.Millisecond); !ok || err != nil {
		return fmt.Errorf("lock %s.lock: %w", path, errors.Join(err, lctx.Err()))
	}
	defer lock.Unlock()
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("open journal: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			w.WriteByte('\n')
		}
	}
	enc := json.NewEncoder(w) // json.Marshal's bytes and a newline
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("append to %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		return syncFile(filepath.Dir(path))
	}
	return f.Close()
}

// checkEvent refuses an event a run could not apply.
func checkEvent(e rules.Event) error {
	status, ok := rules.Actions[e.Action]
	switch {
	case !ok:
		return fmt.Errorf("action %q is not ack, explain, writeoff or reopen", e.Action)
	case e.Workflow != status:
		return fmt.Errorf("action %s leaves workflow status %s, not %q", e.Action, status, e.Workflow)
	case e.ID == "" || e.BreakID == "" || e.Actor == "" || e.At.IsZero():
		return errors.New("event without event_id, break_id, actor or acted_at")
	case e.Reason == "":
		return errors.New("event without a reason")
	}
	if e.Until != "" {
		if _, err := time.Parse(time.DateOnly, e.Until); err != nil {
			return fmt.Errorf("until %q is not YYYY-MM-DD", e.Until)
		}
	}
	return nil
}

// ReadJournal reads every complete line of the journal at path (none when
// it does not exist). A last line without its newline is being written, or
// was torn by a crash: it is left for the next reader.
func ReadJournal(path string) ([]JournalLine, error) {
	var out []JournalLine
	err := eachJournalLine(path, func(l JournalLine) error {
		out = append(out, l)
		return nil
	})
	return out, err
}

// eachJournalLine calls fn with each line ReadJournal reads, in order,
// holding one line at a time.
func eachJournalLine(path string, fn func(JournalLine) error) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read journal: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	var off int64
	for {
		b, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return nil // no line, or a last one without its newline
		}
		if err != nil {
			return fmt.Errorf("read journal: %w", err)
		}
		line := JournalLine{Offset: off, Raw: b}
		off += int64(len(b))
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&line.Event); err != nil {
			line.Err = err
		} else {
			line.Err = checkEvent(line.Event)
		}
		if err := fn(line); err != nil {
			return err
		}
	}
}

// JournalName is the archived copy of the journal lines a run applied.
const JournalName = output.InputsDir + "/journal.jsonl"

// journalChunk is how many journal lines a run holds and applies at a time:
// a bulk action over 600,000 breaks held 700 MB of lines and events.
var journalChunk = 10_000

// eachJournalChunk calls fn with the lines eachJournalLine reads,
// journalChunk at a time.
func eachJournalChunk(path string, fn func([]JournalLine) error) error {
	lines := make([]JournalLine, 0, journalChunk)
	err := eachJournalLine(path, func(l JournalLine) error {
		if lines = append(lines, l); len(lines) < journalChunk {
			return nil
		}
		err := fn(lines)
		lines = lines[:0]
		return err
	})
	if err != nil || len(lines) == 0 {
		return err
	}
	return fn(lines)
}

// PendingEvents returns the valid events of the journal at path that db's
// break_events does not hold (every valid event when db is nil), in journal
// order.
func PendingEvents(ctx context.Context, db rules.Querier, path string) ([]rules.Event, error) {
	var out []rules.Event
	err := eachJournalChunk(path, func(lines []JournalLine) error {
		seen, err := seenLines(ctx, db, lines)
		for _, l := range lines {
			if l.Err == nil && !seen[l.Event.ID] {
				out = append(out, l.Event)
			}
		}
		return err
	})
	return out, err
}

// seenLines returns the event ids of the valid lines that db's break_events
// holds already (none when db is nil).
func seenLines(ctx context.Context, db rules.Querier, lines []JournalLine) (map[string]bool, error) {
	if db == nil {
		return nil, nil
	}
	var ids []string
	for _, l := range lines {
		if l.Err == nil {
			ids = append(ids, l.Event.ID)
		}
	}
	return rules.SeenEvents(ctx, db, ids)
}

// applyJournal applies the lines of the journal at path that db has not
// applied yet (by event_id) into break_events, in one transaction, and
// copies them to runDir/inputs/journal.jsonl (the run's inputs). Lines that
// are not valid events are skipped, each with a warning.
func applyJournal(ctx context.Context, db *sql.DB, path, runDir, runID string, log *slog.Logger) (int, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var copied *journalCopy
	n := 0
	err = eachJournalChunk(path, func(lines []JournalLine) error {
		for _, l := range lines {
			if l.Err != nil {
				log.Warn("journal line skipped: not a valid event", "journal", path, "offset", l.Offset, "err", l.Err)
			}
		}
		seen, err := seenLines(ctx, tx, lines)
		if err != nil {
			return err
		}
		var events []rules.Event
		for _, l := range lines {
			if l.Err != nil || seen[l.Event.ID] {
				continue
			}
			if copied == nil {
				if copied, err = newJournalCopy(filepath.Join(runDir, filepath.FromSlash(JournalName))); err != nil {
					return fmt.Errorf("save the journal lines: %w", err)
				}
			}
			if _, err := copied.w.Write(l.Raw); err != nil {
				return fmt.Errorf("save the journal lines: %w", err)
			}
			e := l.Event
			e.Origin, e.AppliedRun, e.JournalOffset = rules.OriginJournal, runID, &l.Offset
			events = append(events, e)
		}
		k, err := rules.AppendEvents(ctx, tx, events)
		n += k
		return err
	})
	if copied != nil {
		if cerr := copied.close(); err == nil && cerr != nil {
			err = fmt.Errorf("save the journal lines: %w", cerr)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	log.Info("workflow events applied from the journal", "events", n, "journal", path)
	return n, nil
}

// journalCopy is the run's copy of the journal lines it applied.
type journalCopy struct {
	f *os.File
	w *bufio.Writer
}

func newJournalCopy(path string) (*journalCopy, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &journalCopy{f, bufio.NewWriter(f)}, nil
}

func (c *journalCopy) close() error {
	err := c.w.Flush()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// replayJournal applies an archived run's inputs/journal.jsonl, as the run did.
func replayJournal(ctx context.Context, db *sql.DB, dir, runID string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	err = eachJournalChunk(filepath.Join(dir, filepath.FromSlash(JournalName)), func(lines []JournalLine) error {
		events := make([]rules.Event, 0, len(lines))
		for _, l := range lines {
			if l.Err != nil {
				return fmt.Errorf("%s at offset %d: %w", JournalName, l.Offset, l.Err)
			}
			e := l.Event
			e.Origin, e.AppliedRun, e.JournalOffset = rules.OriginJournal, runID, &l.Offset
			events = append(events, e)
		}
		if _, err := rules.AppendEvents(ctx, tx, events); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tx.Commit()
}

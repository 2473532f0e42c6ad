package rules

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Workflow actions, and the workflow status each leaves a break in.
const (
	ActionAck      = "ack"
	ActionExplain  = "explain"
	ActionWriteoff = "writeoff"
	ActionReopen   = "reopen"

	WorkflowOpen         = "open"
	WorkflowAcknowledged = "acknowledged"
	WorkflowExplained    = "explained"
	WorkflowWrittenOff   = "written_off"

	OriginJournal = "journal" // a person's action, journalled by recon breaks
	OriginRun     = "run"     // decided by a run: changed since explained, explanation expired

	// ReasonChanged is the reason of a run's reopen of an explained break
	// whose amount, currency or counterpart changed.
	ReasonChanged = "changed since explained"
	// RunActor is who a run's event names.
	RunActor = "recon"
)

// Actions maps each action a person may take to the workflow status it leaves.
var Actions = map[string]string{ActionAck: WorkflowAcknowledged, ActionExplain: WorkflowExplained,
	ActionWriteoff: WorkflowWrittenOff, ActionReopen: WorkflowOpen}

// Allowed reports whether action may be taken on a break in workflow status
// from whose lifecycle status is status, and why not.
func Allowed(action, from, status string) error {
	switch {
	case action == ActionReopen && from == WorkflowOpen:
		return errors.New("already open")
	case action == ActionReopen:
		return nil
	case status == "resolved":
		return errors.New("resolved: nothing to handle")
	case from == Actions[action]:
		return fmt.Errorf("already %s", from)
	case from == WorkflowWrittenOff:
		return errors.New("written off: reopen it first")
	case action == ActionAck && from == WorkflowExplained:
		return errors.New("explained: reopen it first")
	}
	return nil
}

// Event is one workflow event of a break. Amount is exact decimal text
// ("" when the break has none); Until is a YYYY-MM-DD day or "".
type Event struct {
	Seq            int64     `json:"-"`
	ID             string    `json:"event_id"`
	BreakID        string    `json:"break_id"`
	Action         string    `json:"action"`
	Workflow       string    `json:"workflow_status"`
	PrevWorkflow   string    `json:"previous_workflow_status"`
	Reason         string    `json:"reason"`
	Actor          string    `json:"actor"`
	At             time.Time `json:"acted_at"`
	Until          string    `json:"until_date,omitempty"`
	BreakStatus    string    `json:"break_status"`
	Severity       string    `json:"severity"`
	Currency       string    `json:"currency"`
	Amount         string    `json:"amount"`
	Counterpart    string    `json:"counterpart"`
	Origin         string    `json:"-"`
	AppliedRun     string    `json:"-"`
	JournalOffset  *int64    `json:"-"`
	PrevHash, Hash string    `json:"-"`
}

// GenesisHash is the prev_hash of the first event.
var GenesisHash = strings.Repeat("0", 64)

// Canonical is the encoding the hash covers: a JSON array of the event's
// fields in a fixed order, times in RFC 3339 UTC with microseconds (what
// DuckDB keeps), amounts in their shortest exact form.
func (e Event) Canonical() []byte {
	amount := e.Amount
	if d, err := decimal.NewFromString(amount); err == nil {
		amount = d.String()
	}
	b, _ := json.Marshal([]any{"recon-break-event-v1", e.Seq, e.ID, e.BreakID, e.Action, e.Workflow, e.PrevWorkflow,
		e.Reason, e.Actor, e.At.UTC().Format("2006-01-02T15:04:05.000000Z"), e.Until, e.BreakStatus, e.Severity,
		e.Currency, amount, e.Counterpart, e.Origin, e.AppliedRun, e.PrevHash})
	return b
}

// ComputeHash is the sha256 (hex) of e's canonical encoding.
func (e Event) ComputeHash() string {
	h := sha256.Sum256(e.Canonical())
	return hex.EncodeToString(h[:])
}

// execer is a *sql.Tx, *sql.Conn or *sql.DB.
type execer interface {
	Querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// eventChunk is how many events one statement looks up or inserts. One
// statement an event took about 2 ms each: a bulk action over a million
// breaks would have added half an hour to the next run.
var eventChunk = 10_000

// insertEvents inserts a chunk of events given as one JSON array of
// eventRows: a list parameter a column bound each value apart, which took
// longer than the insert.
const insertEvents = `INSERT INTO break_events
	SELECT e.seq, e.event_id, e.break_id, e.action, e.workflow_status, e.previous_workflow_status, e.reason, e.actor,
		CAST(e.acted_at AS TIMESTAMPTZ), CAST(nullif(e.until_date, '') AS DATE), nullif(e.break_status, ''),
		nullif(e.severity, ''), nullif(e.currency, ''), CAST(nullif(e.amount, '') AS DECIMAL(38,12)),
		nullif(e.counterpart, ''), e.origin, e.applied_run, e.journal_offset, e.prev_hash, e.hash
	FROM (SELECT unnest(from_json(?, '[{"seq": "BIGINT", "event_id": "VARCHAR", "break_id": "VARCHAR", "action": "VARCHAR",
		"workflow_status": "VARCHAR", "previous_workflow_status": "VARCHAR", "reason": "VARCHAR", "actor": "VARCHAR",
		"acted_at": "VARCHAR", "until_date": "VARCHAR", "break_status": "VARCHAR", "severity": "VARCHAR",
		"currency": "VARCHAR", "amount": "VARCHAR", "counterpart": "VARCHAR", "origin": "VARCHAR", "applied_run": "VARCHAR",
		"journal_offset": "BIGINT", "prev_hash": "VARCHAR", "hash": "VARCHAR"}]')) AS e)
	ORDER BY e.seq`

// eventRow is an event as insertEvents reads it: its journal line's
// fields and those the chain gives it.
type eventRow struct {
	Event
	Seq           int64  `json:"seq"`
	Origin        string `json:"origin"`
	AppliedRun    string `json:"applied_run"`
	JournalOffset *int64 `json:"journal_offset"`
	PrevHash      string `json:"prev_hash"`
	Hash          string `json:"hash"`
}

// Querier is a *sql.Tx, *sql.Conn or *sql.DB.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// SeenEvents returns which of ids break_events holds already.
func SeenEvents(ctx context.Context, db Querier, ids []string) (map[string]bool, error) {
	seen := map[string]bool{}
	for from := 0; from < len(ids); from += eventChunk {
		rows, err := db.QueryContext(ctx, `SELECT event_id FROM break_events WHERE event_id IN (SELECT unnest(?::VARCHAR[]))`,
			ids[from:min(from+eventChunk, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("look up events: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			seen[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return seen, nil
}

// AppendEvents adds events to break_events at the end of the chain: each
// gets the next seq, the previous event's hash and its own. Events whose id
// is already there are skipped (a journal line is applied once). It returns
// the events added.
func AppendEvents(ctx context.Context, db execer, events []Event) (int, error) {
	var seq int64
	var prev sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT seq, hash FROM break_events ORDER BY seq DESC LIMIT 1`).Scan(&seq, &prev); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("read the end of the event chain: %w", err)
	}
	hash := GenesisHash
	if prev.Valid {
		hash = prev.String
	}
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	seen, err := SeenEvents(ctx, db, ids)
	if err != nil {
		return 0, err
	}
	n := 0
	chunk := make([]eventRow, 0, min(len(events), eventChunk))
	insert := func() error {
		if len(chunk) == 0 {
			return nil
		}
		b, err := json.Marshal(chunk)
		if err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, insertEvents, string(b)); err != nil {
			return fmt.Errorf("append events %s (break %s) to %s: %w", chunk[0].ID, chunk[0].BreakID, chunk[len(chunk)-1].ID, err)
		}
		n += len(chunk)
		chunk = chunk[:0]
		return nil
	}
	for _, e := range events {
		if seen[e.ID] {
			continue
		}
		seen[e.ID] = true // an id given twice is added once
		seq++
		e.Seq, e.PrevHash, e.At = seq, hash, e.At.UTC().Truncate(time.Microsecond)
		if e.Amount != "" {
			d, err := decimal.NewFromString(e.Amount)
			if err != nil {
				return n, fmt.Errorf("event %s: amount %q: %w", e.ID, e.Amount, err)
			}
			e.Amount = d.String()
		}
		e.Hash = e.ComputeHash()
		hash = e.Hash
		chunk = append(chunk, eventRow{e, e.Seq, e.Origin, e.AppliedRun, e.JournalOffset, e.PrevHash, e.Hash})
		if len(chunk) == eventChunk {
			if err := insert(); err != nil {
				return n, err
			}
		}
	}
	if err := insert(); err != nil {
		return n, err
	}
	return n, nil
}

// eventColumns reads break_events into an Event, in this order.
const eventColumns = `seq, event_id, break_id, action, workflow_status, previous_workflow_status, reason, actor, acted_at,
	coalesce(strftime(until_date, '%Y-%m-%d'), ''), coalesce(break_status, ''), coalesce(severity, ''),
	coalesce(currency, ''), coalesce(CAST(amount AS VARCHAR), ''), coalesce(counterpart, ''), origin, applied_run,
	journal_offset, prev_hash, hash`

func scanEvent(rows *sql.Rows) (Event, error) {
	var e Event
	var off sql.NullInt64
	err := rows.Scan(&e.Seq, &e.ID, &e.BreakID, &e.Action, &e.Workflow, &e.PrevWorkflow, &e.Reason, &e.Actor, &e.At,
		&e.Until, &e.BreakStatus, &e.Severity, &e.Currency, &e.Amount, &e.Counterpart, &e.Origin, &e.AppliedRun,
		&off, &e.PrevHash, &e.Hash)
	if off.Valid {
		e.JournalOffset = &off.Int64
	}
	return e, err
}

// ChainError names the first event where the chain breaks.
type ChainError struct {
	Seq     int64
	EventID string
	BreakID string
	Problem string
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("break_events: event seq %d (event_id %s, break %s): %s", e.Seq, e.EventID, e.BreakID, e.Problem)
}

// Verify walks break_events in seq order and checks the chain: seq 1, 2,
// 3, ...; each prev_hash the previous event's hash; each hash that of its
// fields. It returns the events checked and a *ChainError at the first bad one.
func Verify(ctx context.Context, db interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}) (int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+eventColumns+` FROM break_events ORDER BY seq`)
	if err != nil {
		return 0, fmt.Errorf("read break_events: %w", err)
	}
	defer rows.Close()
	var n int64
	prev := GenesisHash
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return n, err
		}
		bad := func(p string) error { return &ChainError{Seq: e.Seq, EventID: e.ID, BreakID: e.BreakID, Problem: p} }
		switch {
		case e.Seq != n+1:
			return n, bad(fmt.Sprintf("seq %d follows %d: an event is missing", e.Seq, n))
		case e.PrevHash != prev:
			return n, bad("prev_hash is not the hash of the previous event: an event before it was changed, removed or inserted")
		case e.ComputeHash() != e.Hash:
			return n, bad("hash does not match its fields: the event was changed")
		}
		prev = e.Hash
		n++
	}
	return n, rows.Err()
}

// reopenChanged appends the run's reopen events: an explained break seen by
// this run whose amount, currency or counterpart differs from when it was
// explained (reason "changed since explained: ..."), and an explained break
// still unresolved whose --until day is before the run's as_of day
// (reason "explanation expired"). Both are deterministic in the run's
// inputs, so a replay appends the same events.
func reopenChanged(ctx context.Context, tx *sql.Tx, run Run) (int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT b.break_id, b.status, b.severity, coalesce(b.currency, ''),
			coalesce(CAST(b.difference AS VARCHAR), ''), coalesce(b.account, ''),
			CASE WHEN b.last_seen_run = $run_id AND (b.difference IS DISTINCT FROM e.amount OR b.currency IS DISTINCT FROM e.currency
					OR b.account IS DISTINCT FROM e.counterpart)
				THEN concat_ws('; ',
					CASE WHEN b.difference IS DISTINCT FROM e.amount THEN 'amount ' || coalesce(amount_text(e.amount), 'none') || ' -> ' || coalesce(amount_text(b.difference), 'none') END,
					CASE WHEN b.currency IS DISTINCT FROM e.currency THEN 'currency ' || coalesce(e.currency, 'none') || ' -> ' || coalesce(b.currency, 'none') END,
					CASE WHEN b.account IS DISTINCT FROM e.counterpart THEN 'counterpart ' || coalesce(e.counterpart, 'none') || ' -> ' || coalesce(b.account, 'none') END)
			END AS changed,
			CASE WHEN b.status <> 'resolved' AND e.until_date < CAST($as_of AS DATE)
				THEN strftime(e.until_date, '%Y-%m-%d') END AS expired
		FROM breaks b JOIN (FROM break_events QUALIFY row_number() OVER (PARTITION BY break_id ORDER BY seq DESC) = 1) e
			USING (break_id)
		WHERE e.workflow_status = 'explained'
		ORDER BY b.break_id`, sql.Named("run_id", run.ID), sql.Named("as_of", run.AsOf))
	if err != nil {
		return 0, fmt.Errorf("find explained breaks to reopen: %w", err)
	}
	var events []Event
	for rows.Next() {
		e := Event{Action: ActionReopen, Workflow: WorkflowOpen, PrevWorkflow: WorkflowExplained, Actor: RunActor,
			At: run.AsOf, Origin: OriginRun, AppliedRun: run.ID}
		var changed, expired sql.NullString
		if err := rows.Scan(&e.BreakID, &e.BreakStatus, &e.Severity, &e.Currency, &e.Amount, &e.Counterpart, &changed, &expired); err != nil {
			rows.Close()
			return 0, err
		}
		switch {
		case changed.Valid:
			e.Reason = ReasonChanged + ": " + changed.String
		case expired.Valid:
			e.Reason = "explanation expired (explained until " + expired.String + ")"
		default:
			continue
		}
		e.ID = "run:" + run.ID + ":" + e.BreakID
		events = append(events, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return AppendEvents(ctx, tx, events)
}

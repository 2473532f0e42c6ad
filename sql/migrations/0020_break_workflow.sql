-- Break workflow: what finance decided about a break (acknowledged, explained, written off,
-- reopened), who, when and why, as an append-only, hash-chained event log; open_breaks gains the
-- break's workflow status. Events come from `recon breaks ack|explain|writeoff|reopen` through
-- the journal <db>.journal, applied by the next run, and from runs themselves (an explained
-- break whose amount, currency or counterpart changed, or whose --until passed, is reopened).

CREATE TABLE break_events (
    seq              BIGINT PRIMARY KEY,
    event_id         VARCHAR NOT NULL UNIQUE,
    break_id         VARCHAR NOT NULL,
    action           VARCHAR NOT NULL,
    workflow_status  VARCHAR NOT NULL,
    previous_workflow_status VARCHAR NOT NULL,
    reason           VARCHAR NOT NULL,
    actor            VARCHAR NOT NULL,
    acted_at         TIMESTAMPTZ NOT NULL,
    until_date       DATE,
    break_status     VARCHAR,
    severity         VARCHAR,
    currency         VARCHAR,
    amount           DECIMAL(38,12),
    counterpart      VARCHAR,
    origin           VARCHAR NOT NULL,
    applied_run      VARCHAR NOT NULL,
    journal_offset   BIGINT,
    prev_hash        VARCHAR NOT NULL,
    hash             VARCHAR NOT NULL
);
COMMENT ON TABLE break_events IS 'Workflow events of breaks, append-only and never rewritten: one row per action of a person (recon breaks ack|explain|writeoff|reopen, through <db>.journal) or of a run (reopened: changed since explained, or explanation expired). Hash-chained in seq order: recon breaks verify checks it.';
COMMENT ON COLUMN break_events.seq IS 'Position in the chain, 1, 2, 3, ... in the order events were applied.';
COMMENT ON COLUMN break_events.event_id IS 'Unique id of the event (a random UUID for a person''s action, derived from run and break for a run''s); a journal line is applied once, by this id.';
COMMENT ON COLUMN break_events.break_id IS 'Break the event is about (breaks.break_id).';
COMMENT ON COLUMN break_events.action IS 'ack, explain, writeoff or reopen.';
COMMENT ON COLUMN break_events.workflow_status IS 'Workflow status of the break after the event: acknowledged, explained, written_off or open.';
COMMENT ON COLUMN break_events.previous_workflow_status IS 'Workflow status of the break before the event, as the person (or run) saw it.';
COMMENT ON COLUMN break_events.reason IS 'Why (--reason), free text; for a run''s reopen: changed since explained (with what changed) or explanation expired.';
COMMENT ON COLUMN break_events.actor IS 'Who: --by, else the operating system user who typed the command; recon for a run''s event.';
COMMENT ON COLUMN break_events.acted_at IS 'When the action was taken, UTC (the command''s clock; a run''s as_of for a run''s event).';
COMMENT ON COLUMN break_events.until_date IS 'explain --until: last UTC day the explanation holds; the first run with an as_of day after it reopens the break. Null otherwise.';
COMMENT ON COLUMN break_events.break_status IS 'Lifecycle status of the break at that moment (new, persisting, resolved).';
COMMENT ON COLUMN break_events.severity IS 'Severity of the break at that moment (P1..P4).';
COMMENT ON COLUMN break_events.currency IS 'Currency of the break at that moment.';
COMMENT ON COLUMN break_events.amount IS 'The break''s amount (difference) at that moment, in currency; an explained break whose amount changes is reopened.';
COMMENT ON COLUMN break_events.counterpart IS 'The break''s counterpart at that moment: its account (account@address), when one.';
COMMENT ON COLUMN break_events.origin IS 'journal (a person''s action, journalled by recon breaks) or run (decided by the run that applied it).';
COMMENT ON COLUMN break_events.applied_run IS 'Run that applied the event to the warehouse (its archived inputs hold it: inputs/journal.jsonl, or the rules for a run''s event).';
COMMENT ON COLUMN break_events.journal_offset IS 'Byte offset of the event''s line in <db>.journal; null for a run''s event.';
COMMENT ON COLUMN break_events.prev_hash IS 'hash of the previous event in seq order (64 zeros for the first).';
COMMENT ON COLUMN break_events.hash IS 'sha256, hex, of the canonical encoding of this event''s fields (every column but journal_offset and hash, with prev_hash): changing, removing or inserting an event breaks the chain.';

CREATE VIEW break_workflow AS
SELECT break_id, workflow_status, action AS last_action, reason AS last_reason, actor AS last_by,
       acted_at AS last_at, until_date, amount AS handled_amount, currency AS handled_currency
FROM break_events
QUALIFY row_number() OVER (PARTITION BY break_id ORDER BY seq DESC) = 1;
COMMENT ON VIEW break_workflow IS 'The latest workflow event of each break that has one: its workflow status, and who decided it, when and why. A break without events is open.';
COMMENT ON COLUMN break_workflow.break_id IS 'Break (breaks.break_id).';
COMMENT ON COLUMN break_workflow.workflow_status IS 'acknowledged, explained, written_off or open (reopened).';
COMMENT ON COLUMN break_workflow.last_action IS 'ack, explain, writeoff or reopen.';
COMMENT ON COLUMN break_workflow.last_reason IS 'Reason of the latest event.';
COMMENT ON COLUMN break_workflow.last_by IS 'Who took the latest action (recon for a run''s reopen).';
COMMENT ON COLUMN break_workflow.last_at IS 'When, UTC.';
COMMENT ON COLUMN break_workflow.until_date IS 'Last day an explanation holds, when given.';
COMMENT ON COLUMN break_workflow.handled_amount IS 'The break''s amount (difference) when the latest action was taken.';
COMMENT ON COLUMN break_workflow.handled_currency IS 'Its currency then.';

CREATE VIEW break_history AS
SELECT e.seq, e.acted_at, e.break_id, e.action, e.previous_workflow_status, e.workflow_status, e.reason, e.actor,
       e.until_date, e.break_status AS status_then, e.amount AS amount_then, e.currency AS currency_then,
       e.origin, e.applied_run,
       b.rule_id, b.severity, b.status, b.event_date, b.payment_id, b.end_to_end_id, b.account, b.currency,
       b.expected, b.actual, b.difference, b.detail, b.first_seen_run, b.age_days
FROM break_events e LEFT JOIN breaks b USING (break_id)
ORDER BY e.seq;
COMMENT ON VIEW break_history IS 'One row per workflow event, oldest first, with the break''s fields now: who decided what about which break, when and why.';
COMMENT ON COLUMN break_history.seq IS 'Position of the event in the chain.';
COMMENT ON COLUMN break_history.acted_at IS 'When the action was taken, UTC.';
COMMENT ON COLUMN break_history.break_id IS 'Break the event is about.';
COMMENT ON COLUMN break_history.action IS 'ack, explain, writeoff or reopen.';
COMMENT ON COLUMN break_history.previous_workflow_status IS 'Workflow status before the event.';
COMMENT ON COLUMN break_history.workflow_status IS 'Workflow status after the event.';
COMMENT ON COLUMN break_history.reason IS 'Why.';
COMMENT ON COLUMN break_history.actor IS 'Who (recon for a run''s reopen).';
COMMENT ON COLUMN break_history.until_date IS 'Last day an explanation holds, when given.';
COMMENT ON COLUMN break_history.status_then IS 'Lifecycle status of the break when the action was taken.';
COMMENT ON COLUMN break_history.amount_then IS 'Amount (difference) of the break when the action was taken.';
COMMENT ON COLUMN break_history.currency_then IS 'Currency of the break when the action was taken.';
COMMENT ON COLUMN break_history.origin IS 'journal (a person) or run (recon).';
COMMENT ON COLUMN break_history.applied_run IS 'Run that applied the event.';
COMMENT ON COLUMN break_history.rule_id IS 'Rule that found the break.';
COMMENT ON COLUMN break_history.severity IS 'Severity of the break now.';
COMMENT ON COLUMN break_history.status IS 'Lifecycle status of the break now.';
COMMENT ON COLUMN break_history.event_date IS 'UTC day the break belongs to.';
COMMENT ON COLUMN break_history.payment_id IS 'Payment id, when the break is about a payment.';
COMMENT ON COLUMN break_history.end_to_end_id IS 'End-to-end id of the payment.';
COMMENT ON COLUMN break_history.account IS 'Account concerned, when one.';
COMMENT ON COLUMN break_history.currency IS 'Currency of the break now.';
COMMENT ON COLUMN break_history.expected IS 'Amount the reference side says now.';
COMMENT ON COLUMN break_history.actual IS 'Amount the other side says now.';
COMMENT ON COLUMN break_history.difference IS 'actual - expected now.';
COMMENT ON COLUMN break_history.detail IS 'Human explanation of the break.';
COMMENT ON COLUMN break_history.first_seen_run IS 'Run that first found the break.';
COMMENT ON COLUMN break_history.age_days IS 'Whole days since the break was first seen.';

DROP VIEW open_breaks;
CREATE VIEW open_breaks AS
SELECT b.break_id, b.rule_id, b.severity, b.status, b.event_date, b.age_days, b.payment_id, b.end_to_end_id, b.account,
       b.currency, b.expected, b.actual, b.difference, b.detail, b.left_source, b.right_source,
       b.first_seen_run, b.first_seen_at, b.last_seen_run,
       coalesce(w.workflow_status, 'open') AS workflow_status, w.last_reason, w.last_by
FROM breaks b LEFT JOIN break_workflow w USING (break_id)
WHERE b.status <> 'resolved' AND coalesce(w.workflow_status, 'open') IN ('open', 'acknowledged');
COMMENT ON VIEW open_breaks IS 'Breaks not resolved (status new or persisting) and not closed by finance (explained or written off: see break_workflow), most urgent first when ordered by severity, age_days DESC.';
COMMENT ON COLUMN open_breaks.break_id IS 'Stable id of the break (see breaks.break_id).';
COMMENT ON COLUMN open_breaks.rule_id IS 'Rule that found the break.';
COMMENT ON COLUMN open_breaks.severity IS 'P1 (most urgent) .. P4.';
COMMENT ON COLUMN open_breaks.status IS 'new or persisting.';
COMMENT ON COLUMN open_breaks.event_date IS 'UTC day the break belongs to.';
COMMENT ON COLUMN open_breaks.age_days IS 'Whole days since the break was first seen.';
COMMENT ON COLUMN open_breaks.payment_id IS 'Payment id, when the break is about a payment.';
COMMENT ON COLUMN open_breaks.end_to_end_id IS 'End-to-end id of the payment.';
COMMENT ON COLUMN open_breaks.account IS 'Account concerned, when one.';
COMMENT ON COLUMN open_breaks.currency IS 'Currency of expected and actual.';
COMMENT ON COLUMN open_breaks.expected IS 'Amount the reference side says.';
COMMENT ON COLUMN open_breaks.actual IS 'Amount the other side says (null when missing).';
COMMENT ON COLUMN open_breaks.difference IS 'actual - expected, or the missing amount.';
COMMENT ON COLUMN open_breaks.detail IS 'Human explanation of the break.';
COMMENT ON COLUMN open_breaks.left_source IS 'Provenance of the reference side.';
COMMENT ON COLUMN open_breaks.right_source IS 'Provenance of the other side.';
COMMENT ON COLUMN open_breaks.first_seen_run IS 'Run that first found the break.';
COMMENT ON COLUMN open_breaks.first_seen_at IS 'as_of of that run.';
COMMENT ON COLUMN open_breaks.last_seen_run IS 'Last run that found the break.';
COMMENT ON COLUMN open_breaks.workflow_status IS 'open (nobody handled it, or reopened) or acknowledged (seen by finance: out of the new counts and --fail-on-breaks).';
COMMENT ON COLUMN open_breaks.last_reason IS 'Reason of the latest workflow event (recon breaks ...), null when none.';
COMMENT ON COLUMN open_breaks.last_by IS 'Who took the latest workflow action, null when none.';

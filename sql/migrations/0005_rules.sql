-- Rules: severity escalation and ageing on breaks; items inside their grace period (pending).

ALTER TABLE breaks ADD COLUMN base_severity VARCHAR;
ALTER TABLE breaks ADD COLUMN escalation VARCHAR;
ALTER TABLE breaks ADD COLUMN ageing_bucket VARCHAR;
COMMENT ON COLUMN breaks.severity IS 'P1 (most urgent) .. P4: base_severity, raised one level when escalation says why.';
COMMENT ON COLUMN breaks.base_severity IS 'Severity the rule gives the break (its header, or the row), before escalation.';
COMMENT ON COLUMN breaks.escalation IS 'Why severity is one level above base_severity: amount (abs(difference) above the rule''s escalate_amount), age (open longer than escalate_after_days), or both; null when not escalated.';
COMMENT ON COLUMN breaks.ageing_bucket IS 'Ageing bucket of age_days: 0-1, 2-7, 8-30 or >30.';
COMMENT ON COLUMN breaks.age_days IS 'Whole days (24 h) from first_seen_at to the as_of of the last run that covered the break.';

CREATE TABLE pending_items (
    break_id       VARCHAR PRIMARY KEY,
    rule_id        VARCHAR NOT NULL,
    severity       VARCHAR NOT NULL,
    break_key      VARCHAR NOT NULL,
    event_date     DATE NOT NULL,
    due_at         TIMESTAMPTZ NOT NULL,
    payment_id     VARCHAR,
    end_to_end_id  VARCHAR,
    account        VARCHAR,
    currency       VARCHAR,
    expected       DECIMAL(38,12),
    actual         DECIMAL(38,12),
    difference     DECIMAL(38,12),
    detail         VARCHAR,
    left_source    VARCHAR,
    right_source   VARCHAR,
    run_id         VARCHAR NOT NULL,
    as_of          TIMESTAMPTZ NOT NULL
);
COMMENT ON TABLE pending_items IS 'Unmatched items still inside their rule''s grace period, as the last run covering their day saw them: not breaks (yet). Replaced, for the days of its window, by every run.';
COMMENT ON COLUMN pending_items.break_id IS 'The break_id the item gets if it becomes a break.';
COMMENT ON COLUMN pending_items.rule_id IS 'Rule that found the item.';
COMMENT ON COLUMN pending_items.severity IS 'Severity the break would have, before escalation.';
COMMENT ON COLUMN pending_items.break_key IS 'What the rule keys the item on.';
COMMENT ON COLUMN pending_items.event_date IS 'UTC day the item belongs to.';
COMMENT ON COLUMN pending_items.due_at IS 'When the grace period ends: a run with as_of at or after it reports a break if the item is still unmatched.';
COMMENT ON COLUMN pending_items.payment_id IS 'Payment id, when the item is about a payment.';
COMMENT ON COLUMN pending_items.end_to_end_id IS 'End-to-end id of the payment.';
COMMENT ON COLUMN pending_items.account IS 'Account address concerned, when one.';
COMMENT ON COLUMN pending_items.currency IS 'Currency of expected and actual.';
COMMENT ON COLUMN pending_items.expected IS 'Amount the reference side says.';
COMMENT ON COLUMN pending_items.actual IS 'Amount the other side says (null when missing).';
COMMENT ON COLUMN pending_items.difference IS 'actual - expected, when the rule gives it.';
COMMENT ON COLUMN pending_items.detail IS 'Human explanation.';
COMMENT ON COLUMN pending_items.left_source IS 'Provenance of the reference side.';
COMMENT ON COLUMN pending_items.right_source IS 'Provenance of the other side, or where it was looked for.';
COMMENT ON COLUMN pending_items.run_id IS 'Run that saw the item pending.';
COMMENT ON COLUMN pending_items.as_of IS 'as_of of that run.';

CREATE VIEW pending AS
SELECT rule_id, severity, event_date, due_at, due_at - as_of AS grace_left, payment_id, end_to_end_id, account,
       currency, expected, actual, detail, left_source, right_source, run_id, break_id
FROM pending_items
ORDER BY due_at, rule_id, break_id;
COMMENT ON VIEW pending IS 'Items inside their grace period (not breaks), with the grace left at the as_of of the run that saw them.';

-- The label sweep of payment_stale (issue 13): each run lists, whatever
-- their date, the server API payments carrying a payout-failure label or a
-- FORWARDED / AWAITING_COLLECTION sub-state label (GET /payments?with_labels=),
-- and replaces this table with what it found. Breaks a rule finds in such a
-- sweep are marked so that a later run resolves them when the sweep no
-- longer finds them, whatever their day.

CREATE TABLE payment_label_sweep (
    payment_id       VARCHAR NOT NULL,
    payment_state    VARCHAR,
    end_to_end_id    VARCHAR,
    created_at       TIMESTAMPTZ,
    executed_at      TIMESTAMPTZ,
    completed_at     TIMESTAMPTZ,
    modified_at      TIMESTAMPTZ,
    labels           VARCHAR[],
    quote_amount     DECIMAL(38,12),
    quote_currency   VARCHAR,
    sender_address   VARCHAR,
    receiver_address VARCHAR,
    source_file      VARCHAR NOT NULL,
    source_line      BIGINT NOT NULL,
    run_id           VARCHAR NOT NULL
);
COMMENT ON TABLE payment_label_sweep IS 'The last successful label sweep: every server API payment that GET /v4/payments?with_labels=<label> gave for one of the swept labels (docs/provider-choices.md), whatever its date. Replaced whole by each sweep, so a payment whose label was removed leaves it. Key: payment_id.';
COMMENT ON COLUMN payment_label_sweep.payment_id IS 'Payment id (payments.payment_id).';
COMMENT ON COLUMN payment_label_sweep.payment_state IS 'State when swept (payments.payment_state).';
COMMENT ON COLUMN payment_label_sweep.end_to_end_id IS 'contract.sender_end_to_end_id.';
COMMENT ON COLUMN payment_label_sweep.created_at IS 'contract.created_at, UTC.';
COMMENT ON COLUMN payment_label_sweep.executed_at IS 'executed_at, UTC; null if not executed.';
COMMENT ON COLUMN payment_label_sweep.completed_at IS 'completed_at, UTC; null if never completed.';
COMMENT ON COLUMN payment_label_sweep.modified_at IS 'modified_at, UTC.';
COMMENT ON COLUMN payment_label_sweep.labels IS 'internal_info.labels[].label when swept: every label the payment carries, not only the one queried.';
COMMENT ON COLUMN payment_label_sweep.quote_amount IS 'contract.quote.amount.';
COMMENT ON COLUMN payment_label_sweep.quote_currency IS 'contract.quote.currency_code, upper case.';
COMMENT ON COLUMN payment_label_sweep.sender_address IS 'contract.quote.sender_address (account@node).';
COMMENT ON COLUMN payment_label_sweep.receiver_address IS 'contract.quote.receiver_address (account@node).';
COMMENT ON COLUMN payment_label_sweep.source_file IS 'Provenance: the sweep page file (payment_labels/<label>_p<NNNN>.json).';
COMMENT ON COLUMN payment_label_sweep.source_line IS 'Provenance: element number of the payment in the page''s content, from 1.';
COMMENT ON COLUMN payment_label_sweep.run_id IS 'Provenance: run that swept it.';

ALTER TABLE breaks ADD COLUMN sweep BOOLEAN DEFAULT false;
COMMENT ON COLUMN breaks.sweep IS 'True when the rule found the break in a sweep of everything (payment_stale''s label sweep), not in the window: a later run that does not find it resolves it whatever its event_date, unless the rule is held.';
ALTER TABLE pending_items ADD COLUMN sweep BOOLEAN DEFAULT false;
COMMENT ON COLUMN pending_items.sweep IS 'As breaks.sweep: a later run clears the item whatever its event_date, unless the rule is held.';

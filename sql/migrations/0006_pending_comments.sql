-- Comments on the columns of the pending view (0005).
COMMENT ON COLUMN pending.rule_id IS 'Rule that found the item.';
COMMENT ON COLUMN pending.severity IS 'Severity the break will have (P1..P4).';
COMMENT ON COLUMN pending.event_date IS 'UTC day the item belongs to.';
COMMENT ON COLUMN pending.due_at IS 'When the grace period ends and the item becomes a break if still unmatched.';
COMMENT ON COLUMN pending.grace_left IS 'Time left until due_at, at the as_of of the run that saw it.';
COMMENT ON COLUMN pending.payment_id IS 'Payment id (network_payment_id), when the item is about a payment.';
COMMENT ON COLUMN pending.end_to_end_id IS 'End-to-end id of the payment.';
COMMENT ON COLUMN pending.account IS 'Account address concerned, when one.';
COMMENT ON COLUMN pending.currency IS 'Currency of expected and actual, upper case.';
COMMENT ON COLUMN pending.expected IS 'Amount the reference side says.';
COMMENT ON COLUMN pending.actual IS 'Amount the other side says (null when missing).';
COMMENT ON COLUMN pending.detail IS 'Human explanation of the item.';
COMMENT ON COLUMN pending.left_source IS 'Provenance of the reference side.';
COMMENT ON COLUMN pending.right_source IS 'Provenance of the other side, when it exists.';
COMMENT ON COLUMN pending.run_id IS 'Run that last saw the item.';
COMMENT ON COLUMN pending.break_id IS 'The id the break will have: stable across runs.';

-- id: payment_missing_in_statement
-- severity: P1
-- description: A COMPLETED or EXECUTED payment of this node has no statement entry on its account.
-- param: grace_hours = 24  (hours after executed_at before a missing entry is a break)
WITH sides AS (
    SELECT network_payment_id, end_to_end_id, quote_ts, executed_at, payment_state, report_id, source_line,
           sender_address AS account, sent_currency AS currency, -sent_amount AS amount
    FROM payment_ops
    UNION ALL
    SELECT network_payment_id, end_to_end_id, quote_ts, executed_at, payment_state, report_id, source_line,
           receiver_address, received_currency, received_amount
    FROM payment_ops
)
SELECT
    s.network_payment_id || '|' || s.account AS break_key,
    s.quote_ts AS event_at,
    s.network_payment_id AS payment_id,
    s.end_to_end_id,
    s.account,
    s.currency,
    s.amount AS expected,
    'no statement entry for the ' || s.payment_state || ' payment on ' || s.account AS detail,
    'PAYMENT_OPS ' || s.report_id || ' line ' || s.source_line AS left_source
FROM sides s
JOIN node_accounts n ON n.account = s.account
WHERE s.payment_state IN ('COMPLETED', 'EXECUTED')
  AND s.quote_ts >= $window_start AND s.quote_ts < $window_end
  AND coalesce(s.executed_at, s.quote_ts) + to_hours(CAST($grace_hours AS BIGINT)) <= $as_of
  AND NOT EXISTS (
      SELECT 1 FROM statement_entries e
      WHERE e.account = s.account AND e.transaction_id = s.network_payment_id)

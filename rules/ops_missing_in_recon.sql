-- id: ops_missing_in_recon
-- severity: P2
-- description: A COMPLETED or EXECUTED payment in PAYMENT_OPS has no RECON row.
SELECT
    o.network_payment_id AS break_key,
    o.quote_ts AS event_at,
    o.network_payment_id AS payment_id,
    o.end_to_end_id,
    o.sent_currency AS currency,
    o.sent_amount AS expected,
    'PAYMENT_OPS has the ' || o.payment_state || ' payment; RECON has no row for it' AS detail,
    'PAYMENT_OPS ' || o.report_id || ' line ' || o.source_line AS left_source
FROM payment_ops o
WHERE o.payment_state IN ('COMPLETED', 'EXECUTED')
  AND o.quote_ts >= $window_start AND o.quote_ts < $window_end
  AND NOT EXISTS (SELECT 1 FROM recon_transactions r WHERE r.network_payment_id = o.network_payment_id)

-- id: recon_missing_in_ops
-- severity: P2
-- description: A payment in RECON has no PAYMENT_OPS row.
SELECT
    r.network_payment_id AS break_key,
    min(r.quote_ts) AS event_at,
    r.network_payment_id AS payment_id,
    min(r.end_to_end_id) AS end_to_end_id,
    min(r.sent_currency) AS currency,
    min(r.sent_amount) AS expected,
    'RECON has ' || count(*) || ' transaction rows for the payment; PAYMENT_OPS has none' AS detail,
    'RECON ' || min(r.report_id) || ' line ' || min(r.source_line) AS left_source
FROM recon_transactions r
WHERE r.quote_ts >= $window_start AND r.quote_ts < $window_end
  AND NOT EXISTS (SELECT 1 FROM payment_ops o WHERE o.network_payment_id = r.network_payment_id)
GROUP BY r.network_payment_id

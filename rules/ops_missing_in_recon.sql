-- id: ops_missing_in_recon
-- severity: P2
-- description: A COMPLETED or EXECUTED payment in PAYMENT_OPS has no RECON row.
-- reads: payment_ops, recon_transactions, report_files, quarantine
--
-- A payment with a RECON row in quarantine is not missing there:
-- row_quarantined reports that row.
-- The anti joins read the ids only; the few missing rows are read whole after.
WITH missing AS (
    SELECT o.network_payment_id
    FROM payment_ops o
    ANTI JOIN recon_transactions r ON r.network_payment_id = o.network_payment_id
    ANTI JOIN (SELECT payment_id FROM quarantine WHERE source = 'recon') q ON q.payment_id = o.network_payment_id
    WHERE o.quote_ts >= $window_start AND o.quote_ts < $window_end
      AND o.payment_state IN ('COMPLETED', 'EXECUTED')
)
SELECT
    o.network_payment_id AS break_key,
    o.quote_ts AS event_at,
    o.network_payment_id AS payment_id,
    o.end_to_end_id,
    o.sent_currency AS currency,
    o.sent_amount AS expected,
    'PAYMENT_OPS has the ' || o.payment_state || ' payment; RECON has no row for it' AS detail,
    'PAYMENT_OPS report ' || o.report_id || ' line ' || o.source_line AS left_source,
    (SELECT 'no row in RECON report ' || arg_max(f.report_id || ' (' || f.window_from || '..' || f.window_to || ')', f.run_id)
     FROM report_files f
     WHERE f.report_type = 'RECON' AND f.status <> 'FAILED'
       AND CAST(o.quote_ts AS DATE) BETWEEN f.window_from AND f.window_to) AS right_source
FROM payment_ops o
SEMI JOIN missing m ON m.network_payment_id = o.network_payment_id
WHERE o.quote_ts >= $window_start AND o.quote_ts < $window_end

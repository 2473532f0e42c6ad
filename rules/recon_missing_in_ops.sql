-- id: recon_missing_in_ops
-- severity: P2
-- description: A payment in RECON has no PAYMENT_OPS row.
-- reads: recon_transactions, payment_ops, report_files, quarantine
--
-- A payment whose PAYMENT_OPS row sits in quarantine is not missing there:
-- row_quarantined reports that row.
WITH orphans AS (
    SELECT
        r.network_payment_id,
        min(r.quote_ts) AS quote_ts,
        min(r.end_to_end_id) AS end_to_end_id,
        min(r.sent_currency) AS sent_currency,
        min(r.sent_amount) AS sent_amount,
        min(r.payment_state) AS payment_state,
        count(*) AS transactions,
        min(r.report_id) AS report_id,
        min(r.source_line) AS first_line,
        max(r.source_line) AS last_line
    FROM recon_transactions r
    ANTI JOIN payment_ops o ON o.network_payment_id = r.network_payment_id
    ANTI JOIN (SELECT payment_id FROM quarantine WHERE source = 'payment_ops') q ON q.payment_id = r.network_payment_id
    WHERE r.quote_ts >= $window_start AND r.quote_ts < $window_end
    GROUP BY r.network_payment_id
)
SELECT
    x.network_payment_id AS break_key,
    x.quote_ts AS event_at,
    x.network_payment_id AS payment_id,
    x.end_to_end_id,
    x.sent_currency AS currency,
    x.sent_amount AS expected,
    'RECON has ' || x.transactions || ' transaction rows of the ' || x.payment_state
        || ' payment; PAYMENT_OPS has no row for it' AS detail,
    'RECON report ' || x.report_id || ' lines ' || x.first_line || '-' || x.last_line AS left_source,
    (SELECT 'no row in PAYMENT_OPS report ' || arg_max(f.report_id || ' (' || f.window_from || '..' || f.window_to || ')', f.run_id)
     FROM report_files f
     WHERE f.report_type = 'PAYMENT_OPS' AND f.status <> 'FAILED'
       AND CAST(x.quote_ts AS DATE) BETWEEN f.window_from AND f.window_to) AS right_source
FROM orphans x

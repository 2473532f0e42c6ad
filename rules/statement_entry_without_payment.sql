-- id: statement_entry_without_payment
-- severity: P2
-- description: A PAYMENT statement entry on this node's account matches no payment in any report or the server API.
-- reads: statement_entries, statements, payment_ops, recon_transactions, failure_conversions, payments, report_files, quarantine
-- param: grace INTERVAL = 24 hours  (after created_at before an unmatched entry is a break)
-- param: quote_lag INTERVAL = 1 hour  (a payment is quoted at most this long before its entry; the PAYMENT_OPS reports must cover that time)
--
-- The sources of payments are listed in known_payments; another source is
-- one more UNION ALL branch and one more table in reads. A payment whose row
-- in one of them sits in quarantine is known: row_quarantined reports that row.
WITH known_payments AS (
    SELECT network_payment_id AS payment_id FROM payment_ops
    UNION ALL
    SELECT network_payment_id FROM recon_transactions
    UNION ALL
    SELECT network_payment_id FROM failure_conversions
    UNION ALL
    SELECT payment_id FROM payments
    UNION ALL
    SELECT payment_id FROM quarantine WHERE source IN ('payment_ops', 'recon', 'failure_conversion', 'payment')
),
-- the entries to judge, narrow; payment_ops (known to nearly every entry)
-- leaves the few that known_payments has to be probed for
candidates AS (
    SELECT e.rowid AS entry, e.transaction_id
    FROM statement_entries e
    JOIN node_accounts n ON n.account = e.account
    ANTI JOIN payment_ops o ON o.network_payment_id = e.transaction_id
    WHERE e.transaction_type = 'PAYMENT'
      AND e.created_at >= $window_start AND e.created_at < $window_end
      -- judge an entry only when the reports cover the time its payment may have been quoted
      AND EXISTS (
          SELECT 1 FROM report_files f
          WHERE f.report_type = 'PAYMENT_OPS' AND f.status <> 'FAILED'
            AND CAST(e.created_at - CAST($quote_lag AS INTERVAL) AS DATE) BETWEEN f.window_from AND f.window_to)
)
SELECT
    e.account || '|' || e.transaction_id AS break_key,
    e.created_at AS event_at,
    e.created_at + CAST($grace AS INTERVAL) AS due_at,
    e.transaction_id AS payment_id,
    e.end_to_end_id,
    e.account,
    (SELECT arg_max(st.currency, st.end_datetime) FROM statements st WHERE st.account = e.account) AS currency,
    e.balance_change AS actual,
    'the ' || coalesce(e.transaction_state, 'null') || ' PAYMENT entry matches no payment in PAYMENT_OPS, RECON, FAILURE_CONVERSION_SSA or the server API' AS detail,
    'statement entry ' || e.source_file || ' #' || e.source_line AS left_source,
    'no payment ' || e.transaction_id || ' in the reports or the server API' AS right_source
FROM candidates c
ANTI JOIN known_payments k ON k.payment_id = c.transaction_id
JOIN statement_entries e ON e.rowid = c.entry

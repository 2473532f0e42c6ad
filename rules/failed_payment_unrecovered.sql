-- id: failed_payment_unrecovered
-- severity: P1
-- description: The funds of a failed payment have not come back: its FAILURE_CONVERSION_SSA row's ssa_transfer_state is not COMPLETED or EXECUTED; or the server API shows a FAILED payment sent from this node's account whose funds moved (executed_at set, or a TRANSFER execution result) with neither a FAILURE_CONVERSION_SSA row nor a reversing statement entry.
-- reads: failure_conversions, payments, payment_execution_results, statement_entries, statements
-- param: grace INTERVAL = 24 hours  (after execution_timestamp, or when the funds moved, before an unrecovered payment is a break)
--
-- The second part judges the FAILED payments whose funds moved in the
-- window (executed_at, else the first TRANSFER execution result, else
-- modified_at), on the sending side only: the sender's funds are the ones
-- to recover. A reversing entry is a PAYMENT entry on the sending account
-- whose returns_payment_with_id is the payment, or the payment's own
-- entries on that account netting to zero (debited and credited back).
WITH failed AS (
    SELECT p.payment_id, p.end_to_end_id, p.sender_address AS account, p.quote_amount, p.executed_at,
           p.modified_at, p.source_file, p.source_line
    FROM payments p
    JOIN node_accounts a ON a.account = p.sender_address
    WHERE p.payment_state = 'FAILED'
),
-- the TRANSFER results of those payments only: their rowids are found on
-- the id column, then only those rows are read whole
x AS (
    SELECT payment_id, min(execution_timestamp) AS first_transfer_at, count(*) AS transfer_results,
           sum(sending_amount) FILTER (WHERE sender_address IN (SELECT account FROM node_accounts)) AS sent
    FROM payment_execution_results
    WHERE rowid IN (SELECT rowid FROM payment_execution_results
                    WHERE execution_result_type = 'TRANSFER' AND payment_id IN (SELECT payment_id FROM failed))
    GROUP BY payment_id
),
moved AS (
    SELECT p.payment_id, p.end_to_end_id, p.account, p.quote_amount, p.executed_at,
           p.source_file, p.source_line,
           coalesce(p.executed_at, x.first_transfer_at, p.modified_at) AS moved_at, x.sent, x.transfer_results
    FROM failed p
    LEFT JOIN x ON x.payment_id = p.payment_id
    WHERE p.executed_at IS NOT NULL OR x.transfer_results > 0
)
SELECT
    network_payment_id || '|' || coalesce(ssa_remote_transfer_id, '') AS break_key,
    execution_timestamp AS event_at,
    execution_timestamp + CAST($grace AS INTERVAL) AS due_at,
    network_payment_id AS payment_id,
    end_to_end_id,
    ssa_account AS account,
    ssa_transfer_currency AS currency,
    ssa_transfer_amount AS expected,
    'recovery transfer ' || coalesce(ssa_remote_transfer_id, '(no id)') || ' to the settlement account is '
        || coalesce(ssa_transfer_state, 'without state') AS detail,
    'FAILURE_CONVERSION_SSA report ' || report_id || ' line ' || source_line AS left_source,
    NULL AS right_source
FROM failure_conversions
WHERE execution_timestamp >= $window_start AND execution_timestamp < $window_end
  AND coalesce(ssa_transfer_state, '') NOT IN ('COMPLETED', 'EXECUTED')
UNION ALL
SELECT
    m.payment_id || '|' || m.account,
    m.moved_at,
    m.moved_at + CAST($grace AS INTERVAL),
    m.payment_id,
    m.end_to_end_id,
    m.account,
    (SELECT arg_max(st.currency, st.end_datetime) FROM statements st WHERE st.account = m.account),
    coalesce(m.sent, m.quote_amount),
    'the FAILED payment''s funds moved (' || CASE WHEN m.executed_at IS NOT NULL
        THEN 'executed ' || strftime(m.executed_at, '%Y-%m-%dT%H:%M:%SZ') ELSE m.transfer_results || ' TRANSFER execution result(s)' END
        || ') and nothing recovers them: no FAILURE_CONVERSION_SSA row, no reversing statement entry on ' || m.account,
    'server API payment ' || m.source_file || ' #' || m.source_line,
    'no FAILURE_CONVERSION_SSA row; no entry with returns_payment_with_id ' || m.payment_id || ' on ' || m.account
FROM moved m
WHERE m.moved_at >= $window_start AND m.moved_at < $window_end
  AND NOT EXISTS (SELECT 1 FROM failure_conversions f WHERE f.network_payment_id = m.payment_id)
  AND NOT EXISTS (SELECT 1 FROM statement_entries e
                  WHERE e.account = m.account AND e.transaction_type = 'PAYMENT' AND e.returns_payment_with_id = m.payment_id)
  AND NOT EXISTS (SELECT 1 FROM statement_entries e
                  WHERE e.account = m.account AND e.transaction_type = 'PAYMENT' AND e.transaction_id = m.payment_id
                  GROUP BY e.transaction_id HAVING sum(e.balance_change) = 0 AND count(*) > 1)

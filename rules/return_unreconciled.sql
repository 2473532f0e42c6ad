-- id: return_unreconciled
-- severity: P1
-- description: A RETURNED payment on this node's account whose return payment is unknown to the server API, or whose reversing statement entry is missing or differs in amount from the return.
-- reads: payments, payment_execution_results, statement_entries, statements
-- param: grace INTERVAL = 48 hours  (after returned_at before an unreconciled return is a break)
-- param: tolerance DECIMAL(38,12) = 0  (largest difference between the reversing entry and the return that is not a break)
--
-- Judges the server API payments RETURNED in the window (returned_at, else
-- modified_at), once per side on this node's accounts. The return is the
-- payment the original names in returned_by_payment_with_id, else one that
-- names the original in returns_payment_with_id. Its reversing entries are
-- the PAYMENT entries on the account whose returns_payment_with_id is the
-- original or whose transaction_id is the return, summed. The expected
-- reversal is the return's TRANSFER execution results on the account
-- (received minus sent), else the opposite of the original's own entries.
WITH returned AS (
    SELECT p.payment_id, p.end_to_end_id, p.source_file, p.source_line, coalesce(p.returned_at, p.modified_at) AS returned_at,
           p.returned_by_payment_with_id, a.account
    FROM payments p
    JOIN node_accounts a ON a.account IN (p.sender_address, p.receiver_address)
    WHERE p.payment_state = 'RETURNED' AND p.payment_type IS DISTINCT FROM 'RETURN'
      AND coalesce(p.returned_at, p.modified_at) >= $window_start AND coalesce(p.returned_at, p.modified_at) < $window_end
),
matched AS (
    SELECT o.*,
           coalesce(o.returned_by_payment_with_id,
               (SELECT min(r.payment_id) FROM payments r WHERE r.returns_payment_with_id = o.payment_id)) AS return_id
    FROM returned o
),
-- the return's TRANSFER results and the candidate entries of the few
-- payments judged: their rowids are found on the id columns alone, then
-- only those rows are read whole (the subqueries below would read every row)
return_results AS MATERIALIZED (
    SELECT payment_id, sender_address, receiver_address, sending_amount, receiving_amount
    FROM payment_execution_results
    WHERE rowid IN (SELECT rowid FROM payment_execution_results
                    WHERE result_list = 'execution' AND execution_result_type = 'TRANSFER'
                      AND payment_id IN (SELECT return_id FROM matched))
),
entries AS MATERIALIZED (
    SELECT account, transaction_id, returns_payment_with_id, balance_change, source_file, source_line
    FROM statement_entries
    WHERE rowid IN (SELECT rowid FROM statement_entries
                    WHERE transaction_type = 'PAYMENT' AND account IN (SELECT account FROM matched)
                      AND (transaction_id IN (SELECT payment_id FROM matched) OR transaction_id IN (SELECT return_id FROM matched)
                           OR returns_payment_with_id IN (SELECT payment_id FROM matched)))
),
judged AS (
    SELECT m.*,
           r.payment_id IS NOT NULL AS return_known,
           (SELECT sum(CASE WHEN x.receiver_address = m.account THEN x.receiving_amount ELSE 0 END)
                 - sum(CASE WHEN x.sender_address = m.account THEN x.sending_amount ELSE 0 END)
            FROM return_results x
            WHERE x.payment_id = m.return_id AND m.account IN (x.sender_address, x.receiver_address)) AS return_change,
           (SELECT -sum(e.balance_change) FROM entries e
            WHERE e.account = m.account AND e.transaction_id = m.payment_id) AS reversal_of_original,
           (SELECT count(*) FROM entries e
            WHERE e.account = m.account
              AND (e.returns_payment_with_id = m.payment_id OR e.transaction_id = m.return_id)) AS entries,
           (SELECT sum(e.balance_change) FROM entries e
            WHERE e.account = m.account
              AND (e.returns_payment_with_id = m.payment_id OR e.transaction_id = m.return_id)) AS entry_change,
           (SELECT min('statement entry ' || e.source_file || ' #' || e.source_line) FROM entries e
            WHERE e.account = m.account
              AND (e.returns_payment_with_id = m.payment_id OR e.transaction_id = m.return_id)) AS entry_source
    FROM matched m
    LEFT JOIN (SELECT DISTINCT payment_id FROM payments WHERE payment_id IN (SELECT return_id FROM matched)) r
        ON r.payment_id = m.return_id
),
faults AS (
    SELECT j.*, coalesce(j.return_change, j.reversal_of_original) AS expected_change,
           NOT j.return_known AS unknown,
           j.entries = 0 AS unbooked,
           j.entries > 0 AND abs(j.entry_change - coalesce(j.return_change, j.reversal_of_original)) > CAST($tolerance AS DECIMAL(38,12)) AS off
    FROM judged j
)
SELECT
    f.payment_id || '|' || f.account AS break_key,
    f.returned_at AS event_at,
    f.returned_at + CAST($grace AS INTERVAL) AS due_at,
    f.payment_id,
    f.end_to_end_id,
    f.account,
    (SELECT arg_max(st.currency, st.end_datetime) FROM statements st WHERE st.account = f.account) AS currency,
    f.expected_change AS expected,
    f.entry_change AS actual,
    'the payment RETURNED ' || strftime(f.returned_at, '%Y-%m-%dT%H:%M:%SZ') || ': ' || concat_ws('; ',
        CASE WHEN f.unknown THEN coalesce('its return payment ' || f.return_id || ' is unknown to the server API',
                                          'no return payment names it in the server API') END,
        CASE WHEN f.unbooked THEN 'no reversing statement entry on ' || f.account END,
        CASE WHEN f.off THEN 'the reversing entry changes the balance by ' || amount_text(f.entry_change)
            || ', the return by ' || amount_text(f.expected_change) END) AS detail,
    'server API payment ' || f.source_file || ' #' || f.source_line AS left_source,
    coalesce(f.entry_source, 'no entry with returns_payment_with_id ' || f.payment_id
        || coalesce(' or transaction_id ' || f.return_id, '') || ' on ' || f.account) AS right_source
FROM faults f
WHERE f.unknown OR f.unbooked OR coalesce(f.off, false)

-- id: payment_missing_in_statement
-- severity: P1
-- description: A COMPLETED or EXECUTED payment of this node has no statement entry (transaction_id = payment id) on its account.
-- reads: payment_ops, statement_entries, statements, quarantine
--
-- An entry of the payment on the account that sits in quarantine is not
-- missing (row_quarantined reports it).
-- param: grace INTERVAL = 24 hours  (after executed_at before a missing entry is a break)
--
-- The sides are matched with the entries narrow (ops rowid, id, account);
-- the wide columns are read for the sides left.
WITH moved AS NOT MATERIALIZED (
    SELECT rowid AS ops_row, network_payment_id, sender_address, receiver_address
    FROM payment_ops
    WHERE quote_ts >= $window_start AND quote_ts < $window_end
      AND payment_state IN ('COMPLETED', 'EXECUTED')
),
-- the sides of each payment that are this node's accounts
sides AS (
    SELECT ops_row, network_payment_id, sender_address AS account, 'sender' AS side
    FROM moved
    WHERE sender_address IN (SELECT account FROM node_accounts)
    UNION ALL
    SELECT ops_row, network_payment_id, receiver_address, 'receiver'
    FROM moved
    WHERE receiver_address IN (SELECT account FROM node_accounts)
),
missing AS (
    SELECT s.account, s.side,
           o.network_payment_id, o.end_to_end_id, o.quote_ts, coalesce(o.executed_at, o.quote_ts) AS settled_at,
           o.payment_state, o.report_id, o.source_line,
           CASE WHEN s.side = 'sender' THEN o.sent_currency ELSE o.received_currency END AS currency,
           CASE WHEN s.side = 'sender' THEN -o.sent_amount ELSE o.received_amount END AS change
    FROM sides s
    ANTI JOIN statement_entries e ON e.account = s.account AND e.transaction_id = s.network_payment_id
    ANTI JOIN (SELECT account, payment_id FROM quarantine WHERE source = 'statement') q
        ON q.account = s.account AND q.payment_id = s.network_payment_id
    JOIN payment_ops o ON o.rowid = s.ops_row
)
SELECT
    s.network_payment_id || '|' || s.account AS break_key,
    s.quote_ts AS event_at,
    s.settled_at + CAST($grace AS INTERVAL) AS due_at,
    s.network_payment_id AS payment_id,
    s.end_to_end_id,
    s.account,
    s.currency,
    s.change AS expected,
    'no statement entry of the ' || s.payment_state || ' payment on the ' || s.side || '''s account ' || s.account AS detail,
    'PAYMENT_OPS report ' || s.report_id || ' line ' || s.source_line AS left_source,
    (SELECT 'no entry in statement ' || arg_max(strftime(st.start_datetime, '%Y-%m-%dT%H:%M:%SZ') || '..'
         || strftime(st.end_datetime, '%Y-%m-%dT%H:%M:%SZ') || ' (' || st.source_file || ')', st.end_datetime)
     FROM statements st
     WHERE st.account = s.account AND s.settled_at >= st.start_datetime AND s.settled_at < st.end_datetime) AS right_source
FROM missing s

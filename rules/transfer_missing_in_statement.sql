-- id: transfer_missing_in_statement
-- severity: P1
-- description: An EXECUTED or COMPLETED transfer whose sender or receiver is one of this node's accounts has no TRANSFER or EXCHANGE_TRANSFER statement entry on that account with its id (or, when the ledger booked it under another id, with its internal_id or end_to_end_id and its amount).
-- reads: transfers, statement_entries, statements, quarantine
-- param: grace INTERVAL = 24 hours  (after created_at before a missing entry is a break)
--
-- Judges the transfers created in the window, once per side on this node's
-- accounts (an exchange transfer between two of them has two sides). The
-- transfer's amount is in the sender's currency: on the receiving side of
-- an EXCHANGE_TRANSFER the fallback match by internal_id or end_to_end_id
-- does not compare amounts, and expected is null there when the sender's
-- account is ours in another currency. An entry of the account that sits in quarantine
-- with the transfer's id is not missing (row_quarantined reports it).
WITH sides AS (
    SELECT t.*, t.sender_address AS account, 'sender' AS side
    FROM transfers t
    WHERE t.sender_address IN (SELECT account FROM node_accounts)
    UNION ALL
    SELECT t.*, t.receiver_address, 'receiver'
    FROM transfers t
    WHERE t.receiver_address IN (SELECT account FROM node_accounts)
),
currencies AS (
    SELECT account, arg_max(currency, end_datetime) AS currency FROM statements GROUP BY account
),
judged AS (
    SELECT s.*, c.currency, sc.currency AS sender_currency
    FROM sides s
    LEFT JOIN currencies c ON c.account = s.account
    LEFT JOIN currencies sc ON sc.account = s.sender_address
    WHERE s.created_at >= $window_start AND s.created_at < $window_end
      AND s.state IN ('EXECUTED', 'COMPLETED')
)
SELECT
    j.transfer_id || '|' || j.account AS break_key,
    j.created_at AS event_at,
    j.created_at + CAST($grace AS INTERVAL) AS due_at,
    j.end_to_end_id,
    j.account,
    j.currency,
    CASE WHEN j.side = 'sender' THEN -j.amount
         WHEN j.sender_currency IS DISTINCT FROM j.currency AND j.sender_currency IS NOT NULL THEN NULL
         ELSE j.amount END AS expected,
    'no TRANSFER or EXCHANGE_TRANSFER entry of the ' || j.state || ' transfer ' || j.transfer_id
        || coalesce(' (internal_id ' || j.internal_id || ')', '') || ' of ' || coalesce(amount_text(j.amount), 'null')
        || coalesce(' ' || j.sender_currency, '') || ' on the ' || j.side || '''s account ' || j.account AS detail,
    'transfer ' || j.source_file || ' #' || j.source_line AS left_source,
    (SELECT 'no entry in statement ' || arg_max(strftime(st.start_datetime, '%Y-%m-%dT%H:%M:%SZ') || '..'
         || strftime(st.end_datetime, '%Y-%m-%dT%H:%M:%SZ') || ' (' || st.source_file || ')', st.end_datetime)
     FROM statements st
     WHERE st.account = j.account AND j.created_at >= st.start_datetime AND j.created_at < st.end_datetime) AS right_source
FROM judged j
WHERE NOT EXISTS (
    SELECT 1 FROM statement_entries e
    WHERE e.account = j.account
      AND e.transaction_type IN ('TRANSFER', 'EXCHANGE_TRANSFER')
      AND (e.transaction_id = j.transfer_id
           OR ((e.internal_id = j.internal_id OR e.end_to_end_id = j.end_to_end_id)
               AND (abs(e.balance_change) = j.amount OR (e.transaction_type = 'EXCHANGE_TRANSFER' AND j.side = 'receiver')))))
  AND NOT EXISTS (
    SELECT 1 FROM quarantine q
    WHERE q.source = 'statement' AND q.account = j.account AND q.payment_id = j.transfer_id)

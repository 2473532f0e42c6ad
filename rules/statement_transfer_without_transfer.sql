-- id: statement_transfer_without_transfer
-- severity: P2
-- description: A TRANSFER or EXCHANGE_TRANSFER statement entry on this node's account matches no transfer of the server API (by id, or by internal_id or end_to_end_id with the amount).
-- reads: statement_entries, statements, transfers, quarantine
--
-- Judges the entries created in the window. The transfers are matched
-- whatever their date or state (the table keeps every transfer pulled), so
-- an entry booked after midnight finds a transfer of the day before. The
-- fallback match mirrors transfer_missing_in_statement's: same account as a
-- side, same internal_id or end_to_end_id, and the amount (not compared on
-- the receiving side of an EXCHANGE_TRANSFER, whose amount is in the
-- sender's currency). No grace: the transfers are pulled with the
-- statements, up to the same time. A transfer in quarantine is known.
SELECT
    e.account || '|' || e.transaction_id AS break_key,
    e.created_at AS event_at,
    e.end_to_end_id,
    e.account,
    (SELECT arg_max(st.currency, st.end_datetime) FROM statements st WHERE st.account = e.account) AS currency,
    e.balance_change AS actual,
    'the ' || coalesce(e.transaction_state, 'null') || ' ' || e.transaction_type || ' entry '
        || e.transaction_id || coalesce(' (internal_id ' || e.internal_id || ')', '') || ' matches no transfer of the server API' AS detail,
    'statement entry ' || e.source_file || ' #' || e.source_line AS left_source,
    'no transfer ' || e.transaction_id || ' in GET /transfers' AS right_source
FROM statement_entries e
JOIN node_accounts n ON n.account = e.account
WHERE e.transaction_type IN ('TRANSFER', 'EXCHANGE_TRANSFER')
  AND e.created_at >= $window_start AND e.created_at < $window_end
  AND NOT EXISTS (
      SELECT 1 FROM transfers t
      WHERE t.transfer_id = e.transaction_id
         OR ((t.internal_id = e.internal_id OR t.end_to_end_id = e.end_to_end_id)
             AND (t.sender_address = e.account OR t.receiver_address = e.account)
             AND (abs(e.balance_change) = t.amount OR (e.transaction_type = 'EXCHANGE_TRANSFER' AND t.receiver_address = e.account))))
  AND NOT EXISTS (
      SELECT 1 FROM quarantine q WHERE q.source = 'transfer' AND q.record_key = e.transaction_id)

-- id: statement_amount_mismatch
-- severity: P1
-- description: abs(balance_change) of a payment's statement entry differs from the payment's amount on that side (sender: sent_amount, receiver: received_amount).
-- reads: payment_ops, statement_entries
-- param: tolerance DECIMAL(38,12) = 0  (largest difference that is not a break, in the account's currency)
--
-- The payment-to-entry join carries rowids and amounts only; the wide
-- columns are read for the mismatches.
WITH sides AS (
    SELECT
        o.rowid AS ops_row, e.rowid AS entry_row, e.account, e.balance_change,
        CASE WHEN e.account = o.sender_address THEN 'sent_amount' ELSE 'received_amount' END AS field,
        CASE WHEN e.account = o.sender_address THEN o.sent_amount ELSE o.received_amount END AS amount
    FROM payment_ops o
    JOIN statement_entries e ON e.transaction_id = o.network_payment_id
        AND (e.account = o.sender_address OR e.account = o.receiver_address)
    JOIN node_accounts n ON n.account = e.account
    WHERE o.quote_ts >= $window_start AND o.quote_ts < $window_end
      AND e.transaction_type = 'PAYMENT'
),
mismatches AS (
    SELECT *
    FROM sides
    WHERE coalesce(abs(abs(balance_change) - amount) > CAST($tolerance AS DECIMAL(38,12)), balance_change IS DISTINCT FROM amount)
)
SELECT
    o.network_payment_id || '|' || m.account AS break_key,
    o.quote_ts AS event_at,
    o.network_payment_id AS payment_id,
    o.end_to_end_id,
    m.account,
    CASE WHEN m.field = 'sent_amount' THEN o.sent_currency ELSE o.received_currency END AS currency,
    m.amount AS expected,
    abs(m.balance_change) AS actual,
    'the statement entry changes the balance by ' || amount_text(m.balance_change) || '; the payment''s ' || m.field
        || ' is ' || amount_text(m.amount) AS detail,
    'PAYMENT_OPS report ' || o.report_id || ' line ' || o.source_line AS left_source,
    'statement entry ' || e.source_file || ' #' || e.source_line AS right_source
FROM mismatches m
JOIN payment_ops o ON o.rowid = m.ops_row
JOIN statement_entries e ON e.rowid = m.entry_row

-- id: statement_amount_mismatch
-- severity: P1
-- description: abs(balance_change) of a payment's statement entry differs from the payment's amount on that side (sender: sent_amount, receiver: received_amount).
-- reads: payment_ops, statement_entries
-- param: tolerance DECIMAL(38,12) = 0  (largest difference that is not a break, in the account's currency)
WITH sides AS (
    SELECT
        o.network_payment_id, o.end_to_end_id, o.quote_ts, o.report_id, o.source_line AS ops_line,
        e.account, e.balance_change, e.source_file, e.source_line AS entry_line,
        CASE WHEN e.account = o.sender_address THEN 'sent_amount' ELSE 'received_amount' END AS field,
        CASE WHEN e.account = o.sender_address THEN o.sent_amount ELSE o.received_amount END AS amount,
        CASE WHEN e.account = o.sender_address THEN o.sent_currency ELSE o.received_currency END AS currency
    FROM payment_ops o
    JOIN statement_entries e ON e.transaction_id = o.network_payment_id
        AND (e.account = o.sender_address OR e.account = o.receiver_address)
    JOIN node_accounts n ON n.account = e.account
    WHERE o.quote_ts >= $window_start AND o.quote_ts < $window_end
      AND e.transaction_type = 'PAYMENT'
)
SELECT
    network_payment_id || '|' || account AS break_key,
    quote_ts AS event_at,
    network_payment_id AS payment_id,
    end_to_end_id,
    account,
    currency,
    amount AS expected,
    abs(balance_change) AS actual,
    'the statement entry changes the balance by ' || amount_text(balance_change) || '; the payment''s ' || field
        || ' is ' || amount_text(amount) AS detail,
    'PAYMENT_OPS report ' || report_id || ' line ' || ops_line AS left_source,
    'statement entry ' || source_file || ' #' || entry_line AS right_source
FROM sides
WHERE coalesce(abs(abs(balance_change) - amount) > CAST($tolerance AS DECIMAL(38,12)), balance_change IS DISTINCT FROM amount)

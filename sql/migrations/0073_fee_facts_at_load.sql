-- fee_mismatch at 1M payments a day (issues 13, 17). Its legs joined every
-- execution result to its payment (type, method) and to its payment's first
-- and last execution_result_order (node types), and its total check grouped
-- all of them by payment: most of its time. The loader now derives those
-- facts from each payment's JSON (transform/payment_detail.go); derived.sql
-- fills them for rows loaded before (sql.Derive runs after this migration).

ALTER TABLE payment_execution_results ADD COLUMN sender_node_type VARCHAR;
ALTER TABLE payment_execution_results ADD COLUMN receiver_node_type VARCHAR;
ALTER TABLE payment_execution_results ADD COLUMN payment_type VARCHAR;
ALTER TABLE payment_execution_results ADD COLUMN payment_method VARCHAR;
ALTER TABLE payments ADD COLUMN fee_totals_differ BOOLEAN;

COMMENT ON COLUMN payment_execution_results.sender_node_type IS 'execution results: the sender''s node type in the fee configuration''s terms (DESIGN §3): INITIAL for the result with the payment''s lowest execution_result_order, else INTERMEDIATE. Null for the liquidation and push_forward lists.';
COMMENT ON COLUMN payment_execution_results.receiver_node_type IS 'execution results: the receiver''s node type: TERMINAL for the result with the payment''s highest execution_result_order, else INTERMEDIATE. Null for the liquidation and push_forward lists.';
COMMENT ON COLUMN payment_execution_results.payment_type IS 'The payment''s payment_type (payments.payment_type), copied at load so fee legs need no join.';
COMMENT ON COLUMN payment_execution_results.payment_method IS 'The payment''s contract.quote.payment_method (payments.payment_method), copied at load.';
COMMENT ON COLUMN payments.fee_totals_differ IS 'True when contract.fee_info.total_fees and the sending_fee + receiving_fee of the payment''s TRANSFER execution results (by transfer_currency_code) add up differently in some currency, over the rows loaded; fee_mismatch judges those payments.';

-- payment_fee_legs_for reads the derived columns: the same legs, without the
-- joins. The view payment_fee_legs reads it by name and is unchanged.
CREATE OR REPLACE MACRO payment_fee_legs_for(accounts, judged_from, judged_to) AS TABLE
WITH results AS (
    SELECT rowid AS result_row, execution_timestamp, transfer_currency_code, sender_node_type, receiver_node_type,
           payment_type, payment_method, sender_address, receiver_address, sending_amount, receiving_amount,
           sending_fee, receiving_fee
    FROM payment_execution_results
    WHERE result_list = 'execution' AND execution_result_type = 'TRANSFER'
      AND (judged_from IS NULL OR execution_timestamp >= judged_from)
      AND (judged_to IS NULL OR execution_timestamp < judged_to)
      AND (accounts IS NULL OR list_contains(accounts, sender_address) OR list_contains(accounts, receiver_address))
), sides AS (
    SELECT r.result_row, r.execution_timestamp, r.transfer_currency_code AS currency,
           CASE WHEN r.payment_type = 'RETURN' THEN 'RETURN' ELSE 'REGULAR' END AS payment_type, r.payment_method,
           unnest([{'side': 'sender', 'account': r.sender_address, 'amount': r.sending_amount, 'charged': r.sending_fee,
                    'node_type': r.sender_node_type},
                   {'side': 'receiver', 'account': r.receiver_address, 'amount': r.receiving_amount, 'charged': r.receiving_fee,
                    'node_type': r.receiver_node_type}],
                  recursive := true)
    FROM results r
), legs AS MATERIALIZED (
    SELECT s.result_row * 2 + CASE s.side WHEN 'sender' THEN 0 ELSE 1 END AS leg, s.result_row, s.side, s.account,
           s.currency, s.amount, s.charged, s.node_type, s.payment_type, s.payment_method,
           greatest(s.execution_timestamp, (SELECT min(valid_from) FROM fee_history)) AS config_at
    FROM sides s
    WHERE accounts IS NULL OR list_contains(accounts, s.account)
), matched AS (
    SELECT l.leg, fee_amount(h.fee_type, h.value, l.amount) AS fee
    FROM legs l
    JOIN fee_history h
      ON fee_applies(h.valid_from, h.valid_to, h.role_type, h.payment_type, h.node_type, h.currency_code,
                     h.partner_name, h.account_name, h.payout_method, h.lower_limit, h.upper_limit,
                     l.config_at, l.side, l.payment_type, l.node_type, l.currency, l.account, l.payment_method, l.amount)
), summed AS (
    SELECT leg, count(*) AS fees, count(*) FILTER (WHERE fee IS NULL) AS unknown_fees, sum(fee) AS expected
    FROM matched GROUP BY leg
)
SELECT l.result_row, l.side, l.account, l.currency, l.amount, l.node_type, l.payment_type, l.payment_method, l.config_at,
       coalesce(l.charged, 0) AS charged,
       CASE WHEN coalesce(s.unknown_fees, 0) = 0 THEN coalesce(s.expected, 0) END AS expected,
       coalesce(s.fees, 0) AS fees
FROM legs l LEFT JOIN summed s USING (leg);

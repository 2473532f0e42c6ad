-- payment_fee_legs, same rows, cheaper (issue 17: the rule catalogue on a
-- 1M-payment day): the first and last execution result of each payment come
-- from one grouped pass instead of two window functions over every result,
-- only TRANSFER results are expanded into legs, and the matching fees are
-- listed unordered and then sorted (list_sort) instead of by an ordered
-- aggregate, which DuckDB sorts group by group. fee_id leads the struct, so
-- the order is still by fee_id. A PERCENTAGE fee is computed once before
-- fee_round expands it (OFFSET 0 keeps the subquery from being merged).

CREATE OR REPLACE VIEW payment_fee_legs AS
WITH res AS (
    SELECT r.*, o.first_order, o.last_order
    FROM payment_execution_results r
    JOIN (SELECT payment_id, min(execution_result_order) AS first_order, max(execution_result_order) AS last_order
          FROM payment_execution_results WHERE result_list = 'execution' GROUP BY payment_id) o USING (payment_id)
    WHERE r.result_list = 'execution' AND r.execution_result_type = 'TRANSFER'
), legs AS (
    SELECT payment_id, execution_result_id, execution_timestamp, 'sender' AS side, sender_address AS account,
           transfer_currency_code AS currency, sending_amount AS amount, sending_fee AS charged,
           CASE WHEN execution_result_order = first_order THEN 'INITIAL' ELSE 'INTERMEDIATE' END AS node_type,
           execution_result_type
    FROM res
    UNION ALL
    SELECT payment_id, execution_result_id, execution_timestamp, 'receiver', receiver_address,
           transfer_currency_code, receiving_amount, receiving_fee,
           CASE WHEN execution_result_order = last_order THEN 'TERMINAL' ELSE 'INTERMEDIATE' END,
           execution_result_type
    FROM res
), first_snapshot AS (
    SELECT min(valid_from) AS at FROM fee_history
), judged AS (
    SELECT l.*, CASE WHEN p.payment_type = 'RETURN' THEN 'RETURN' ELSE 'REGULAR' END AS payment_type,
           p.payment_method, greatest(l.execution_timestamp, f.at) AS config_at
    FROM legs l
    JOIN payments p USING (payment_id)
    CROSS JOIN first_snapshot f
    WHERE l.execution_result_type = 'TRANSFER'
), matched AS (
    SELECT payment_id, execution_result_id, side, fee_id, fee_type, value, lower_limit, upper_limit,
           CASE fee_type WHEN 'PERCENTAGE' THEN fee_round(pct) WHEN 'FLAT_RATE' THEN fee_round(value) END AS fee
    FROM (SELECT j.payment_id, j.execution_result_id, j.side, h.fee_id, h.fee_type, h.value, h.lower_limit, h.upper_limit,
                 CASE WHEN h.fee_type = 'PERCENTAGE' THEN CAST(j.amount * h.value AS DECIMAL(38,14)) * 0.01 END AS pct
    FROM judged j
    JOIN fee_history h
      ON h.valid_from <= j.config_at AND (h.valid_to IS NULL OR j.config_at < h.valid_to)
     AND h.role_type IN (CASE j.side WHEN 'sender' THEN 'SENDING' ELSE 'RECEIVING' END,
                         CASE j.side WHEN 'sender' THEN 'INSTITUTION_SENDING' ELSE 'INSTITUTION_RECEIVING' END)
     AND h.payment_type = j.payment_type
     AND h.node_type = j.node_type
     AND h.currency_code = j.currency
     AND (h.partner_name IS NULL OR h.partner_name = split_part(j.account, '@', 2))
     AND (h.account_name IS NULL OR h.account_name = j.account OR h.account_name = split_part(j.account, '@', 1))
     AND (h.payout_method IS NULL OR h.payout_method = j.payment_method)
     AND (h.lower_limit IS NULL OR j.amount >= h.lower_limit)
     AND (h.upper_limit IS NULL OR j.amount < h.upper_limit)
         OFFSET 0)
), summed AS (
    SELECT payment_id, execution_result_id, side, count(*) AS fees,
           count(*) FILTER (WHERE fee IS NULL) AS unknown_fees,
           sum(fee) AS expected,
           list_sort(list({'fee_id': fee_id, 'fee_type': fee_type, 'value': value, 'lower_limit': lower_limit,
                 'upper_limit': upper_limit, 'fee': fee})) AS config
    FROM matched GROUP BY payment_id, execution_result_id, side
)
SELECT j.payment_id, j.execution_result_id, j.execution_timestamp, j.side, j.account, j.currency, j.amount,
       j.node_type, j.payment_type, j.payment_method, j.config_at,
       coalesce(j.charged, 0) AS charged,
       CASE WHEN coalesce(s.unknown_fees, 0) = 0 THEN coalesce(s.expected, 0) END AS expected,
       coalesce(s.fees, 0) AS fees,
       s.config
FROM judged j
LEFT JOIN summed s USING (payment_id, execution_result_id, side);
COMMENT ON VIEW payment_fee_legs IS 'Both sides of every TRANSFER execution result of a server API payment, with the fee it charged and the fee this node''s configuration gives it (DESIGN §3): the fees of fee_history in force at execution_timestamp (or in the first snapshot, for a payment before it) whose role_type (SENDING or INSTITUTION_SENDING for the sender''s side, RECEIVING or INSTITUTION_RECEIVING for the receiver''s), payment_type, node_type, currency_code, partner_name, account_name, payout_method and slab match, each rounded half-even to 2 decimals. fee_mismatch keeps the sides on this node''s accounts.';
COMMENT ON COLUMN payment_fee_legs.payment_id IS 'Payment id (payments.payment_id).';
COMMENT ON COLUMN payment_fee_legs.execution_result_id IS 'The TRANSFER execution result.';
COMMENT ON COLUMN payment_fee_legs.execution_timestamp IS 'When it executed.';
COMMENT ON COLUMN payment_fee_legs.side IS 'sender (sending_fee, sending_amount) or receiver (receiving_fee, receiving_amount).';
COMMENT ON COLUMN payment_fee_legs.account IS 'sender_address or receiver_address of the side.';
COMMENT ON COLUMN payment_fee_legs.currency IS 'transfer_currency_code: the currency of the amount and of the fee.';
COMMENT ON COLUMN payment_fee_legs.amount IS 'sending_amount or receiving_amount: the amount the fee and the slabs apply to.';
COMMENT ON COLUMN payment_fee_legs.node_type IS 'INITIAL (the sender of the first execution result), TERMINAL (the receiver of the last) or INTERMEDIATE.';
COMMENT ON COLUMN payment_fee_legs.payment_type IS 'RETURN for a return payment, else REGULAR.';
COMMENT ON COLUMN payment_fee_legs.payment_method IS 'The payment''s payment_method, matched with a fee''s payout_method.';
COMMENT ON COLUMN payment_fee_legs.config_at IS 'Instant whose configuration applies: execution_timestamp, or the first snapshot''s valid_from when later.';
COMMENT ON COLUMN payment_fee_legs.charged IS 'sending_fee or receiving_fee (0 when null).';
COMMENT ON COLUMN payment_fee_legs.expected IS 'Sum of the matching fees (0 when none); null when one of them has a fee_type recon cannot compute.';
COMMENT ON COLUMN payment_fee_legs.fees IS 'Number of matching fees.';
COMMENT ON COLUMN payment_fee_legs.config IS 'The matching fees: fee_id, fee_type, value, lower_limit, upper_limit and the fee each gives.';

-- id: fee_mismatch
-- severity: P2
-- description: The fee this node charged on a TRANSFER leg of a payment differs (beyond tolerance) from the fee recomputed from the fee configuration in force when it executed, or contract.fee_info.total_fees disagrees in a currency with the sum of the TRANSFER execution results' fees.
-- reads: payment_fee_legs, payments, payment_execution_results, payment_fees, fee_history, fees
-- param: tolerance DECIMAL(38,12) = 0.00  (largest difference that is not a break)
--
-- Judges the TRANSFER execution results executed in the window. A leg is
-- this node's when its account (sender_address: sending_fee; receiver_address:
-- receiving_fee) is one of this node's accounts; payment_fee_legs recomputes
-- its fee (DESIGN §3: slab lower bound inclusive, upper exclusive; each fee
-- rounded half-even to 2 decimals; docs/rules.md). A leg whose matching fee
-- has a fee_type recon cannot compute is a break with expected null. The
-- total check compares, per currency, total_fees with sending_fee +
-- receiving_fee over every TRANSFER execution result of the payment, every
-- node's; it reports the payment on its first account of this node.
WITH ours AS (
    SELECT l.* FROM payment_fee_legs l JOIN node_accounts n ON n.account = l.account
    WHERE l.execution_timestamp >= $window_start AND l.execution_timestamp < $window_end
),
leg_breaks AS (
    SELECT
        o.payment_id || '|' || o.execution_result_id || '|' || o.side AS break_key,
        o.execution_timestamp AS event_at,
        o.payment_id, o.account, o.currency, o.expected, o.charged AS actual,
        CASE WHEN o.expected IS NULL
            THEN 'charged ' || amount_text(o.charged) || ' ' || coalesce(o.currency, '') || ', expected unknown as the ' || o.side
                || ': a matching fee has a fee_type other than PERCENTAGE or FLAT_RATE'
            ELSE 'charged ' || amount_text(o.charged) || ' ' || coalesce(o.currency, '') || ', expected ' || amount_text(o.expected)
                || ' as the ' || o.side || ' (' || o.node_type || ', ' || o.payment_type || ') of ' || amount_text(o.amount) END
            || ' from ' || CASE WHEN o.fees = 0 THEN 'no matching fee'
                ELSE array_to_string(list_transform(o.config, c -> 'fee ' || c.fee_id || ' ' || coalesce(c.fee_type, 'null')
                    || ' ' || coalesce(amount_text(c.value), 'null')
                    || CASE WHEN c.lower_limit IS NOT NULL OR c.upper_limit IS NOT NULL
                            THEN ' slab [' || coalesce(amount_text(c.lower_limit), '') || ', ' || coalesce(amount_text(c.upper_limit), '') || ')'
                            ELSE '' END
                    || ' = ' || coalesce(amount_text(c.fee), '?')), '; ') END
            || ' (the configuration of ' || strftime(o.config_at, '%Y-%m-%dT%H:%M:%SZ') || ')' AS detail,
        'execution result ' || o.execution_result_id || ' (' || r.source_file || ' #' || r.source_line || ')' AS left_source,
        'fee configuration (fee_history)' AS right_source
    FROM ours o
    JOIN payment_execution_results r USING (payment_id, execution_result_id)
    WHERE o.expected IS NULL OR abs(o.charged - o.expected) > CAST($tolerance AS DECIMAL(38,12))
),
judged AS (
    SELECT payment_id, min(account) AS account, min(execution_timestamp) AS event_at FROM ours GROUP BY payment_id
),
results AS (
    SELECT r.payment_id, r.transfer_currency_code AS currency,
           sum(coalesce(r.sending_fee, 0) + coalesce(r.receiving_fee, 0)) AS fees, count(*) AS legs
    FROM payment_execution_results r JOIN judged USING (payment_id)
    WHERE r.result_list = 'execution' AND r.execution_result_type = 'TRANSFER'
    GROUP BY r.payment_id, r.transfer_currency_code
),
totals AS (
    SELECT f.payment_id, f.fee_currency AS currency, sum(f.total_fee) AS total, min(f.source_file || ' #' || f.source_line) AS src
    FROM payment_fees f JOIN judged USING (payment_id)
    GROUP BY f.payment_id, f.fee_currency
),
total_breaks AS (
    SELECT
        j.payment_id || '|total_fees|' || coalesce(coalesce(t.currency, x.currency), '') AS break_key,
        j.event_at, j.payment_id, j.account, coalesce(t.currency, x.currency) AS currency,
        coalesce(x.fees, 0) AS expected, coalesce(t.total, 0) AS actual,
        'fee_info.total_fees in ' || coalesce(coalesce(t.currency, x.currency), 'null') || ' is '
            || coalesce(amount_text(t.total), 'absent') || ', the fees of the ' || coalesce(x.legs, 0)
            || ' TRANSFER execution results in it add up to ' || amount_text(coalesce(x.fees, 0)) AS detail,
        'fee_info.total_fees (' || coalesce(t.src, 'none') || ')' AS left_source,
        'execution results of payment ' || j.payment_id AS right_source
    FROM totals t
    FULL JOIN results x USING (payment_id, currency)
    JOIN judged j ON j.payment_id = coalesce(t.payment_id, x.payment_id)
    WHERE abs(coalesce(t.total, 0) - coalesce(x.fees, 0)) > CAST($tolerance AS DECIMAL(38,12))
)
SELECT b.break_key, b.event_at, b.payment_id, p.end_to_end_id, b.account, b.currency, b.expected, b.actual,
       b.detail, b.left_source, b.right_source
FROM (SELECT * FROM leg_breaks UNION ALL SELECT * FROM total_breaks) b
LEFT JOIN payments p USING (payment_id)

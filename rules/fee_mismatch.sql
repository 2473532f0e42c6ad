-- id: fee_mismatch
-- severity: P2
-- description: The fee this node charged on a TRANSFER leg of a payment differs (beyond tolerance) from the fee recomputed from the fee configuration in force when it executed, or contract.fee_info.total_fees disagrees in a currency with the sum of the TRANSFER execution results' fees.
-- reads: payment_fee_legs, payments, payment_execution_results, payment_fees, fee_history, fees
-- param: tolerance DECIMAL(38,12) = 0.00  (largest difference that is not a break)
--
-- Judges the TRANSFER execution results executed in the window. A leg is
-- this node's when its account (sender_address: sending_fee; receiver_address:
-- receiving_fee) is one of this node's accounts; payment_fee_legs_for (the
-- macro behind payment_fee_legs) recomputes its fee (DESIGN §3: slab lower
-- bound inclusive, upper exclusive; each fee rounded half-even to 2
-- decimals; docs/rules.md), and fee_applies lists the fees of a break. A
-- leg whose matching fee has a fee_type recon cannot compute is a break
-- with expected null. The total check compares, per currency, total_fees
-- with sending_fee + receiving_fee over every TRANSFER execution result of
-- the payment, every node's; it reports the payment on its first account
-- of this node. It looks only at the payments the loader marked
-- fee_totals_differ (the sums differ exactly), then applies the tolerance.
WITH off AS (
    SELECT r.payment_id, r.execution_result_id, r.execution_timestamp, r.source_file, r.source_line, l.*
    FROM payment_fee_legs_for((SELECT list(account) FROM node_accounts), $window_start, $window_end) l
    JOIN payment_execution_results r ON r.rowid = l.result_row
    WHERE l.expected IS NULL OR abs(l.charged - l.expected) > CAST($tolerance AS DECIMAL(38,12))
),
configured AS (
    SELECT o.payment_id, o.execution_result_id, o.side,
           string_agg('fee ' || h.fee_id || ' ' || coalesce(h.fee_type, 'null') || ' ' || coalesce(amount_text(h.value), 'null')
               || CASE WHEN h.lower_limit IS NOT NULL OR h.upper_limit IS NOT NULL
                       THEN ' slab [' || coalesce(amount_text(h.lower_limit), '') || ', ' || coalesce(amount_text(h.upper_limit), '') || ')'
                       ELSE '' END
               || ' = ' || coalesce(amount_text(fee_amount(h.fee_type, h.value, o.amount)), '?'), '; ' ORDER BY h.fee_id) AS config
    FROM off o
    JOIN fee_history h
      ON fee_applies(h.valid_from, h.valid_to, h.role_type, h.payment_type, h.node_type, h.currency_code,
                     h.partner_name, h.account_name, h.payout_method, h.lower_limit, h.upper_limit,
                     o.config_at, o.side, o.payment_type, o.node_type, o.currency, o.account, o.payment_method, o.amount)
    GROUP BY ALL
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
            || ' from ' || coalesce(c.config, 'no matching fee')
            || ' (the configuration of ' || strftime(o.config_at, '%Y-%m-%dT%H:%M:%SZ') || ')' AS detail,
        'execution result ' || o.execution_result_id || ' (' || o.source_file || ' #' || o.source_line || ')' AS left_source,
        'fee configuration (fee_history)' AS right_source
    FROM off o
    LEFT JOIN configured c USING (payment_id, execution_result_id, side)
),
judged AS (
    SELECT payment_id, min(account) AS account, min(execution_timestamp) AS event_at
    FROM (SELECT payment_id, execution_timestamp, unnest([sender_address, receiver_address]) AS account
          FROM payment_execution_results
          WHERE result_list = 'execution' AND execution_result_type = 'TRANSFER'
            AND execution_timestamp >= $window_start AND execution_timestamp < $window_end
            AND payment_id IN (SELECT payment_id FROM payments WHERE fee_totals_differ))
    WHERE account IN (SELECT account FROM node_accounts)
    GROUP BY payment_id
),
sums AS (
    SELECT payment_id, currency
    FROM (SELECT payment_id, transfer_currency_code AS currency, coalesce(sending_fee, 0) + coalesce(receiving_fee, 0) AS diff
          FROM payment_execution_results
          WHERE result_list = 'execution' AND execution_result_type = 'TRANSFER' AND (sending_fee <> 0 OR receiving_fee <> 0)
          UNION ALL
          SELECT payment_id, fee_currency, -total_fee FROM payment_fees)
    WHERE payment_id IN (SELECT payment_id FROM judged)
    GROUP BY payment_id, currency
    HAVING abs(sum(diff)) > CAST($tolerance AS DECIMAL(38,12))
),
total_breaks AS (
    SELECT
        s.payment_id || '|total_fees|' || coalesce(s.currency, '') AS break_key,
        j.event_at, s.payment_id, j.account, s.currency,
        coalesce(x.fees, 0) AS expected, coalesce(t.total, 0) AS actual,
        'fee_info.total_fees in ' || coalesce(s.currency, 'null') || ' is '
            || coalesce(amount_text(t.total), 'absent') || ', the fees of the ' || coalesce(x.legs, 0)
            || ' TRANSFER execution results in it add up to ' || amount_text(coalesce(x.fees, 0)) AS detail,
        'fee_info.total_fees (' || coalesce(t.src, 'none') || ')' AS left_source,
        'execution results of payment ' || s.payment_id AS right_source
    FROM sums s
    JOIN judged j USING (payment_id)
    LEFT JOIN (SELECT payment_id, transfer_currency_code AS currency, count(*) AS legs,
                      sum(coalesce(sending_fee, 0) + coalesce(receiving_fee, 0)) AS fees
               FROM payment_execution_results
               WHERE result_list = 'execution' AND execution_result_type = 'TRANSFER' AND payment_id IN (SELECT payment_id FROM sums)
               GROUP BY ALL) x ON x.payment_id = s.payment_id AND x.currency IS NOT DISTINCT FROM s.currency
    LEFT JOIN (SELECT payment_id, fee_currency AS currency, sum(total_fee) AS total, min(source_file || ' #' || source_line) AS src
               FROM payment_fees WHERE payment_id IN (SELECT payment_id FROM sums)
               GROUP BY ALL) t ON t.payment_id = s.payment_id AND t.currency IS NOT DISTINCT FROM s.currency
)
SELECT b.break_key, b.event_at, b.payment_id, p.end_to_end_id, b.account, b.currency, b.expected, b.actual,
       b.detail, b.left_source, b.right_source
FROM (SELECT * FROM leg_breaks UNION ALL SELECT * FROM total_breaks) b
LEFT JOIN payments p USING (payment_id)

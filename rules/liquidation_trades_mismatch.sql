-- id: liquidation_trades_mismatch
-- severity: P2
-- description: A COMPLETED liquidation whose trade requests' amounts do not add up to destination_amount (beyond tolerance per trade request), or with a FAILED trade request whose funds are not fiat_available_after_failure.
-- reads: liquidations, liquidation_trades
-- param: tolerance DECIMAL(38,12) = 0.01  (largest difference per trade request that is not a break: each trade's fiat is rounded alone)
--
-- Judges the liquidations created in the window whose status is COMPLETED:
-- FAILED and PARTIALLY_COMPLETED ones are liquidation_not_delivered's. A
-- COMPLETED liquidation without any trade request compares 0 with its
-- destination_amount, within one tolerance. expected is destination_amount,
-- actual the sum of the trade requests' amount (fiat available after fees).
-- Only count and sum are taken over every trade request; the liquidations are
-- judged on the few columns the test needs, the rest read for the breaks.
WITH t AS (
    SELECT liquidation_id, count(*) AS trades, sum(amount) AS total,
           count(*) FILTER (WHERE status = 'FAILED' AND NOT coalesce(fiat_available_after_failure, false)) AS stranded
    FROM liquidation_trades
    GROUP BY liquidation_id
),
found AS (
    SELECT l.rowid AS row_id, l.liquidation_id, t.trades, t.total, t.stranded
    FROM liquidations l
    LEFT JOIN t USING (liquidation_id)
    WHERE l.created_at >= $window_start AND l.created_at < $window_end
      AND l.status = 'COMPLETED'
      AND (abs(coalesce(t.total, 0) - coalesce(l.destination_amount, 0))
               > CAST($tolerance AS DECIMAL(38,12)) * greatest(coalesce(t.trades, 0), 1)
           OR coalesce(t.stranded, 0) > 0)
),
first_stranded AS (
    SELECT liquidation_id, min(trade_id) AS first_stranded
    FROM liquidation_trades
    WHERE status = 'FAILED' AND NOT coalesce(fiat_available_after_failure, false)
      AND liquidation_id IN (SELECT liquidation_id FROM found)
    GROUP BY liquidation_id
)
SELECT
    l.liquidation_id AS break_key,
    l.created_at AS event_at,
    l.network_payment_id AS payment_id,
    l.network_receiver_address AS account,
    l.destination_currency AS currency,
    l.destination_amount AS expected,
    coalesce(f.total, 0) AS actual,
    concat_ws('; ',
        CASE WHEN abs(coalesce(f.total, 0) - l.destination_amount) > CAST($tolerance AS DECIMAL(38,12)) * greatest(coalesce(f.trades, 0), 1)
            THEN 'the ' || coalesce(f.trades, 0) || ' trade requests add up to ' || amount_text(coalesce(f.total, 0))
                || ', destination_amount is ' || coalesce(amount_text(l.destination_amount), 'null') END,
        CASE WHEN f.stranded > 0
            THEN f.stranded || ' FAILED trade request(s) whose fiat is not available after the failure (first '
                || s.first_stranded || ')' END) AS detail,
    'liquidation ' || l.liquidation_id || ' (' || l.source_file || ')' AS left_source,
    'trade requests of ' || l.source_file AS right_source
FROM found f
JOIN liquidations l ON l.rowid = f.row_id
LEFT JOIN first_stranded s ON s.liquidation_id = f.liquidation_id

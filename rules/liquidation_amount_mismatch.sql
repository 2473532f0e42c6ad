-- id: liquidation_amount_mismatch
-- severity: P2
-- description: A liquidation's destination_amount differs from the sum of destination_result_adjusted_proceeds of its payment's RECON rows beyond tolerance, or its currency from theirs (case-insensitively).
-- reads: liquidations, recon_transactions
-- param: tolerance DECIMAL(38,12) = 0.01  (largest amount difference that is not a break, in the liquidation's currency)
--
-- The RECON side is the reference: the payment's rows quoted in the window,
-- their proceeds in the payment's received_currency. A payment without
-- RECON rows is ops_missing_in_recon's, not judged here. The default
-- tolerance is one cent: a liquidation is sold in several trades, each
-- rounded on its own.
-- Only the liquidations' payments are aggregated, and only the sum and the
-- currency; the rest is read for the few breaking payments.
WITH liq AS (
    SELECT network_payment_id FROM liquidations
),
-- payments with proceeds: the currency of their proceeds rows
with_proceeds AS (
    SELECT network_payment_id, sum(destination_result_adjusted_proceeds) AS proceeds,
           min(upper(received_currency)) AS currency
    FROM recon_transactions
    WHERE quote_ts >= $window_start AND quote_ts < $window_end
      AND destination_result_adjusted_proceeds IS NOT NULL
      AND network_payment_id IN (SELECT network_payment_id FROM liq)
    GROUP BY network_payment_id
),
-- payments with RECON rows but no proceeds: the currency of all their rows
without_proceeds AS (
    SELECT network_payment_id, CAST(NULL AS DECIMAL(38,12)) AS proceeds, min(upper(received_currency)) AS currency
    FROM recon_transactions
    WHERE quote_ts >= $window_start AND quote_ts < $window_end
      AND network_payment_id IN (SELECT l.network_payment_id FROM liq l ANTI JOIN with_proceeds w USING (network_payment_id))
    GROUP BY network_payment_id
),
found AS (
    SELECT l.liquidation_id, l.network_payment_id, l.network_receiver_address, l.destination_amount,
           l.destination_currency, l.source_file, p.proceeds, p.currency AS recon_currency,
           upper(l.destination_currency) IS DISTINCT FROM p.currency AS currency_differs
    FROM liquidations l
    JOIN (SELECT * FROM with_proceeds UNION ALL SELECT * FROM without_proceeds) p
        ON p.network_payment_id = l.network_payment_id
    WHERE upper(l.destination_currency) IS DISTINCT FROM p.currency
       OR coalesce(abs(l.destination_amount - coalesce(p.proceeds, 0)) > CAST($tolerance AS DECIMAL(38,12)), true)
),
-- the RECON rows of the breaking payments only
details AS (
    SELECT
        r.network_payment_id,
        min(r.quote_ts) AS quote_ts,
        min(r.end_to_end_id) AS end_to_end_id,
        min(r.report_id) AS report_id,
        string_agg(r.source_line, ', ' ORDER BY r.source_line)
            FILTER (WHERE r.destination_result_adjusted_proceeds IS NOT NULL) AS lines
    FROM recon_transactions r
    WHERE r.quote_ts >= $window_start AND r.quote_ts < $window_end
      AND r.network_payment_id IN (SELECT network_payment_id FROM found)
    GROUP BY r.network_payment_id
)
SELECT
    liquidation_id AS break_key,
    quote_ts AS event_at,
    f.network_payment_id AS payment_id,
    end_to_end_id,
    network_receiver_address AS account,
    recon_currency AS currency,
    proceeds AS expected,
    -- an amount in another currency is not comparable: actual stays null then
    CASE WHEN NOT currency_differs THEN destination_amount END AS actual,
    'liquidation destination_amount ' || coalesce(amount_text(destination_amount), 'null') || ' '
        || coalesce(upper(destination_currency), 'null') || ', RECON adjusted proceeds '
        || coalesce(amount_text(proceeds), 'null') || ' ' || coalesce(recon_currency, 'null') AS detail,
    'RECON report ' || report_id || coalesce(' lines ' || lines, ' (no proceeds)') AS left_source,
    'liquidation ' || liquidation_id || ' (' || source_file || ')' AS right_source
FROM found f
JOIN details USING (network_payment_id)

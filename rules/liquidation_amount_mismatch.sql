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
WITH proceeds AS (
    SELECT
        network_payment_id,
        min(quote_ts) AS quote_ts,
        min(end_to_end_id) AS end_to_end_id,
        sum(destination_result_adjusted_proceeds) AS proceeds,
        coalesce(min(upper(received_currency)) FILTER (WHERE destination_result_adjusted_proceeds IS NOT NULL),
            min(upper(received_currency))) AS currency,
        min(report_id) AS report_id
    FROM recon_transactions
    WHERE quote_ts >= $window_start AND quote_ts < $window_end
    GROUP BY network_payment_id
),
compared AS (
    SELECT
        l.*, p.quote_ts, p.end_to_end_id, p.proceeds, p.currency AS recon_currency, p.report_id,
        upper(l.destination_currency) IS DISTINCT FROM p.currency AS currency_differs
    FROM liquidations l
    JOIN proceeds p ON p.network_payment_id = l.network_payment_id
),
found AS (
    SELECT * FROM compared
    WHERE currency_differs
       OR coalesce(abs(destination_amount - coalesce(proceeds, 0)) > CAST($tolerance AS DECIMAL(38,12)), true)
),
-- the RECON lines of the breaking payments only
lines AS (
    SELECT r.network_payment_id, string_agg(r.source_line, ', ' ORDER BY r.source_line) AS lines
    FROM recon_transactions r
    JOIN (SELECT DISTINCT network_payment_id FROM found) f ON f.network_payment_id = r.network_payment_id
    WHERE r.quote_ts >= $window_start AND r.quote_ts < $window_end
      AND r.destination_result_adjusted_proceeds IS NOT NULL
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
LEFT JOIN lines USING (network_payment_id)

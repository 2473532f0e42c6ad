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
-- Each liquidation is joined to the proceeds rows of its payment and only
-- their sum and currency are taken; the rest is read for the breaking ones.
WITH judged AS (
    SELECT l.rowid AS row_id, any_value(l.network_payment_id) AS network_payment_id,
           count(r.network_payment_id) AS proceeds_rows,
           sum(r.destination_result_adjusted_proceeds) AS proceeds,
           min(upper(r.received_currency)) AS currency
    FROM liquidations l
    LEFT JOIN recon_transactions r ON r.network_payment_id = l.network_payment_id
        AND r.quote_ts >= $window_start AND r.quote_ts < $window_end
        AND r.destination_result_adjusted_proceeds IS NOT NULL
    GROUP BY l.rowid
),
-- without a currency from proceeds rows, the currency of all the payment's
-- rows; a payment with no RECON row in the window has no row here
all_rows AS (
    SELECT network_payment_id, min(upper(received_currency)) AS currency
    FROM recon_transactions
    WHERE quote_ts >= $window_start AND quote_ts < $window_end
      AND network_payment_id IN (SELECT network_payment_id FROM judged WHERE currency IS NULL)
    GROUP BY network_payment_id
),
found AS (
    SELECT l.liquidation_id, l.network_payment_id, l.network_receiver_address, l.destination_amount,
           l.destination_currency, l.source_file, j.proceeds, coalesce(j.currency, a.currency) AS recon_currency,
           upper(l.destination_currency) IS DISTINCT FROM coalesce(j.currency, a.currency) AS currency_differs
    FROM judged j
    LEFT JOIN all_rows a ON j.currency IS NULL AND a.network_payment_id = j.network_payment_id
    JOIN liquidations l ON l.rowid = j.row_id
    WHERE (j.proceeds_rows > 0 OR a.network_payment_id IS NOT NULL)
      AND (upper(l.destination_currency) IS DISTINCT FROM coalesce(j.currency, a.currency)
           OR coalesce(abs(l.destination_amount - coalesce(j.proceeds, 0)) > CAST($tolerance AS DECIMAL(38,12)), true))
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

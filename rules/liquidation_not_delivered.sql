-- id: liquidation_not_delivered
-- severity: P1
-- description: A liquidation did not deliver all its fiat: total_fiat_non_deliverable > 0, status FAILED or PARTIALLY_COMPLETED, or COMPLETED with total_fiat_executed different from execution_summary.total_fiat.
-- reads: liquidations
--
-- Judges the liquidations created in the window. expected is the
-- liquidation's destination_amount; actual is the fiat it delivered,
-- total_fiat_executed less total_fiat_non_deliverable.
SELECT
    liquidation_id AS break_key,
    created_at AS event_at,
    network_payment_id AS payment_id,
    network_receiver_address AS account,
    destination_currency AS currency,
    destination_amount AS expected,
    coalesce(trading_summary_total_fiat_executed, 0) - coalesce(trading_summary_total_fiat_non_deliverable, 0) AS actual,
    concat_ws('; ',
        CASE WHEN status IN ('FAILED', 'PARTIALLY_COMPLETED') THEN 'status ' || status END,
        CASE WHEN trading_summary_total_fiat_non_deliverable > 0
            THEN 'total_fiat_non_deliverable ' || amount_text(trading_summary_total_fiat_non_deliverable) END,
        CASE WHEN status = 'COMPLETED' AND trading_summary_total_fiat_executed IS DISTINCT FROM execution_summary_total_fiat
            THEN 'COMPLETED with total_fiat_executed ' || coalesce(amount_text(trading_summary_total_fiat_executed), 'null')
                || ' but execution_summary.total_fiat ' || coalesce(amount_text(execution_summary_total_fiat), 'null') END) AS detail,
    'liquidation ' || liquidation_id || ' (' || source_file || ')' AS left_source
FROM liquidations
WHERE created_at >= $window_start AND created_at < $window_end
  AND (coalesce(trading_summary_total_fiat_non_deliverable, 0) > 0
    OR status IN ('FAILED', 'PARTIALLY_COMPLETED')
    OR (status = 'COMPLETED' AND trading_summary_total_fiat_executed IS DISTINCT FROM execution_summary_total_fiat))

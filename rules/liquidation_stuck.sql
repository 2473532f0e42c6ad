-- id: liquidation_stuck
-- severity: P3
-- description: A liquidation is not finished (not COMPLETED, PARTIALLY_COMPLETED or FAILED: CREATED, QUEUED, STARTED or a status recon does not know) longer than a threshold after it was created, at the run's as-of time.
-- reads: liquidations
-- param: threshold INTERVAL = 24 hours  (after created_at before an unfinished liquidation is a break)
--
-- Measured from created_at, not from the last change: a liquidation whose
-- trades trickle in for a day is stuck too. Younger unfinished ones are
-- pending. The list of statuses is open (spec: "not shown"): a status
-- outside known_values is not a known terminal one, so it counts as
-- unfinished.
SELECT
    liquidation_id AS break_key,
    created_at AS event_at,
    created_at + CAST($threshold AS INTERVAL) AS due_at,
    network_payment_id AS payment_id,
    network_receiver_address AS account,
    destination_currency AS currency,
    destination_amount AS expected,
    trading_summary_total_fiat_executed AS actual,
    'status ' || status || ', created ' || strftime(created_at, '%Y-%m-%dT%H:%M:%SZ')
        || coalesce(', last modified ' || strftime(modified_at, '%Y-%m-%dT%H:%M:%SZ'), '') || '; '
        || coalesce(amount_text(trading_summary_total_fiat_in_flight), '0') || ' in flight' AS detail,
    'liquidation ' || liquidation_id || ' (' || source_file || ')' AS left_source
FROM liquidations
WHERE created_at >= $window_start AND created_at < $window_end
  AND status NOT IN ('COMPLETED', 'PARTIALLY_COMPLETED', 'FAILED')

-- id: failed_payment_unrecovered
-- severity: P1
-- description: The funds of a failed payment have not come back: its FAILURE_CONVERSION_SSA row's ssa_transfer_state is not COMPLETED or EXECUTED.
-- reads: failure_conversions
-- param: grace INTERVAL = 24 hours  (after execution_timestamp before an unrecovered payment is a break)
SELECT
    network_payment_id || '|' || coalesce(ssa_remote_transfer_id, '') AS break_key,
    execution_timestamp AS event_at,
    execution_timestamp + CAST($grace AS INTERVAL) AS due_at,
    network_payment_id AS payment_id,
    end_to_end_id,
    ssa_account AS account,
    ssa_transfer_currency AS currency,
    ssa_transfer_amount AS expected,
    'recovery transfer ' || coalesce(ssa_remote_transfer_id, '(no id)') || ' to the settlement account is '
        || coalesce(ssa_transfer_state, 'without state') AS detail,
    'FAILURE_CONVERSION_SSA report ' || report_id || ' line ' || source_line AS left_source
FROM failure_conversions
WHERE execution_timestamp >= $window_start AND execution_timestamp < $window_end
  AND coalesce(ssa_transfer_state, '') NOT IN ('COMPLETED', 'EXECUTED')

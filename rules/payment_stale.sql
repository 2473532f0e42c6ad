-- id: payment_stale
-- severity: P3
-- description: A server API payment is stuck: ACCEPTED, LOCKED, LOCK_DECLINED, PREPARED or SETTLEMENT_DECLINED past its contract expires_at plus grace, or EXECUTED with label OUTBOUND_TRANSFER_FAILED_RECOVERABLY longer than a threshold after executed_at; label OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY is a P1 break at once.
-- reads: payments
-- param: grace INTERVAL = 24 hours  (after the contract's expires_at before an unfinished payment is a break)
-- param: threshold INTERVAL = 24 hours  (after executed_at before an EXECUTED payment whose payout failed recoverably is a break)
--
-- Judges the payments created in the window (contract created_at). The
-- header's P3 is the severity of a stale payment; a row with label
-- OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY returns severity P1 (the funds
-- must be recovered by hand from the destination exchange) and has no
-- grace. One break per payment: that label first.
WITH judged AS (
    SELECT
        *,
        CASE
            WHEN list_contains(labels, 'OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY') THEN 'irrecoverable'
            WHEN payment_state IN ('ACCEPTED', 'LOCKED', 'LOCK_DECLINED', 'PREPARED', 'SETTLEMENT_DECLINED') THEN 'unfinished'
            WHEN payment_state = 'EXECUTED' AND list_contains(labels, 'OUTBOUND_TRANSFER_FAILED_RECOVERABLY') THEN 'recoverable'
        END AS kind
    FROM payments
    WHERE created_at >= $window_start AND created_at < $window_end
)
SELECT
    j.payment_id AS break_key,
    j.created_at AS event_at,
    CASE j.kind
        WHEN 'unfinished' THEN coalesce(j.expires_at, j.created_at) + CAST($grace AS INTERVAL)
        WHEN 'recoverable' THEN coalesce(j.executed_at, j.modified_at, j.created_at) + CAST($threshold AS INTERVAL)
    END AS due_at,
    CASE WHEN j.kind = 'irrecoverable' THEN 'P1' END AS severity,
    j.payment_id,
    j.end_to_end_id,
    CASE WHEN s.account IS NOT NULL THEN j.sender_address ELSE j.receiver_address END AS account,
    j.quote_currency AS currency,
    j.quote_amount AS expected,
    CASE j.kind
        WHEN 'irrecoverable' THEN 'the ' || coalesce(j.payment_state, 'null')
            || ' payment carries OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY: its funds must be recovered from the destination exchange'
        WHEN 'unfinished' THEN 'the payment is still ' || j.payment_state || '; its contract expired '
            || coalesce(strftime(j.expires_at, '%Y-%m-%dT%H:%M:%SZ'), 'at an unknown time')
        ELSE 'the EXECUTED payment carries OUTBOUND_TRANSFER_FAILED_RECOVERABLY since it executed '
            || coalesce(strftime(j.executed_at, '%Y-%m-%dT%H:%M:%SZ'), 'at an unknown time') || '; its payout was not amended'
    END AS detail,
    'server API payment ' || j.source_file || ' #' || j.source_line AS left_source
FROM judged j
LEFT JOIN node_accounts s ON s.account = j.sender_address
WHERE j.kind IS NOT NULL

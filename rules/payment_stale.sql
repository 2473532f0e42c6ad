-- id: payment_stale
-- severity: P3
-- description: A server API payment is stuck: ACCEPTED, LOCKED, LOCK_DECLINED, PREPARED or SETTLEMENT_DECLINED past its contract expires_at plus grace; or, whatever its date, carrying OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY (P1 at once) or, EXECUTED, OUTBOUND_TRANSFER_FAILED_RECOVERABLY longer than a threshold after executed_at, in this run's label sweep; or FORWARDED, AWAITING_COLLECTION (state or sub-state label) or EXECUTED and never completed longer than stuck_after (P2).
-- reads: payments, payment_label_sweep
-- param: grace INTERVAL = 24 hours  (after the contract's expires_at before an unfinished payment is a break)
-- param: threshold INTERVAL = 24 hours  (after executed_at before an EXECUTED payment whose payout failed recoverably is a break)
-- param: stuck_after INTERVAL = 14 days  (after executed_at, else created_at, before a FORWARDED, AWAITING_COLLECTION or never-completed EXECUTED payment is a break)
--
-- Three scopes. The unfinished states are judged on the payments created
-- in the window (contract created_at). The payout-failure labels are judged
-- on the label sweep of this run (payment_label_sweep, whatever the
-- payments' dates), never on the labels of an older copy in payments: a
-- label removed since resolves the break. The stuck states are judged on
-- every payment recon knows, its latest copy (the sweep's or the payments
-- table's); before stuck_after such a payment is in flight, not pending.
-- Rows of the last two scopes are sweep rows (break resolved by any later
-- run that does not find them); their event_at is created_at held inside
-- the window. One break per payment, key payment_id, in this order:
-- irrecoverable, recoverable, unfinished, stuck.
WITH latest AS (
    SELECT *
    FROM (
        SELECT payment_id, payment_state, end_to_end_id, created_at, executed_at, completed_at, modified_at, labels,
            sender_address, receiver_address, quote_amount, quote_currency, source_file, source_line, true AS swept
        FROM payment_label_sweep
        UNION ALL
        SELECT payment_id, payment_state, end_to_end_id, created_at, executed_at, completed_at, modified_at, labels,
            sender_address, receiver_address, quote_amount, quote_currency, source_file, source_line, false AS swept
        FROM payments
    )
    -- Only the payments with a copy that is stuck (the test of the stuck
    -- scope below) can have a stuck latest copy: rank no others.
    WHERE payment_id IN (
        SELECT payment_id FROM payment_label_sweep WHERE coalesce(payment_state NOT IN ('COMPLETED', 'FAILED', 'RETURNED'), true)
                AND (payment_state IN ('FORWARDED', 'AWAITING_COLLECTION')
                    OR list_has_any(labels, ['FORWARDED', 'AWAITING_COLLECTION'])
                    OR (payment_state = 'EXECUTED' AND completed_at IS NULL))
                AND coalesce(executed_at, created_at) + CAST($stuck_after AS INTERVAL) <= $as_of
        UNION ALL
        SELECT payment_id FROM payments WHERE coalesce(payment_state NOT IN ('COMPLETED', 'FAILED', 'RETURNED'), true)
                AND (payment_state IN ('FORWARDED', 'AWAITING_COLLECTION')
                    OR list_has_any(labels, ['FORWARDED', 'AWAITING_COLLECTION'])
                    OR (payment_state = 'EXECUTED' AND completed_at IS NULL))
                AND coalesce(executed_at, created_at) + CAST($stuck_after AS INTERVAL) <= $as_of
    )
    QUALIFY row_number() OVER (PARTITION BY payment_id ORDER BY modified_at DESC NULLS LAST, swept DESC) = 1
),
judged AS (
    SELECT
        payment_id, payment_state, end_to_end_id, created_at, executed_at, modified_at, labels, sender_address,
        receiver_address, quote_amount, quote_currency, source_file, source_line, NULL AS expires_at, true AS sweep,
        CASE WHEN list_contains(labels, 'OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY') THEN 'irrecoverable'
            ELSE 'recoverable' END AS kind
    FROM payment_label_sweep
    WHERE list_contains(labels, 'OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY')
        OR (payment_state = 'EXECUTED' AND list_contains(labels, 'OUTBOUND_TRANSFER_FAILED_RECOVERABLY'))
    UNION ALL
    SELECT
        payment_id, payment_state, end_to_end_id, created_at, executed_at, modified_at, labels, sender_address,
        receiver_address, quote_amount, quote_currency, source_file, source_line, expires_at, false AS sweep, 'unfinished' AS kind
    FROM payments
    WHERE created_at >= $window_start AND created_at < $window_end
        AND payment_state IN ('ACCEPTED', 'LOCKED', 'LOCK_DECLINED', 'PREPARED', 'SETTLEMENT_DECLINED')
    UNION ALL
    SELECT
        payment_id, payment_state, end_to_end_id, created_at, executed_at, modified_at, labels, sender_address,
        receiver_address, quote_amount, quote_currency, source_file, source_line, NULL AS expires_at, true AS sweep, 'stuck' AS kind
    FROM latest
    WHERE coalesce(payment_state NOT IN ('COMPLETED', 'FAILED', 'RETURNED'), true)
        AND (payment_state IN ('FORWARDED', 'AWAITING_COLLECTION')
            OR list_has_any(labels, ['FORWARDED', 'AWAITING_COLLECTION'])
            OR (payment_state = 'EXECUTED' AND completed_at IS NULL))
        AND coalesce(executed_at, created_at) + CAST($stuck_after AS INTERVAL) <= $as_of
),
one AS (
    SELECT *
    FROM judged
    QUALIFY row_number() OVER (PARTITION BY payment_id ORDER BY
        list_position(['irrecoverable', 'recoverable', 'unfinished', 'stuck'], kind)) = 1
)
SELECT
    j.payment_id AS break_key,
    CASE WHEN j.sweep
        THEN greatest(least(coalesce(j.created_at, $window_start), $window_end - INTERVAL 1 millisecond), $window_start)
        ELSE j.created_at END AS event_at,
    CASE j.kind
        WHEN 'unfinished' THEN coalesce(j.expires_at, j.created_at) + CAST($grace AS INTERVAL)
        WHEN 'recoverable' THEN coalesce(j.executed_at, j.modified_at, j.created_at) + CAST($threshold AS INTERVAL)
    END AS due_at,
    CASE j.kind WHEN 'irrecoverable' THEN 'P1' WHEN 'stuck' THEN 'P2' END AS severity,
    j.sweep,
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
        WHEN 'recoverable' THEN 'the EXECUTED payment carries OUTBOUND_TRANSFER_FAILED_RECOVERABLY since it executed '
            || coalesce(strftime(j.executed_at, '%Y-%m-%dT%H:%M:%SZ'), 'at an unknown time') || '; its payout was not amended'
        ELSE 'the payment is still ' || coalesce(j.payment_state, 'null')
            || CASE WHEN j.payment_state NOT IN ('FORWARDED', 'AWAITING_COLLECTION')
                    AND list_has_any(j.labels, ['FORWARDED', 'AWAITING_COLLECTION'])
                THEN ' (' || array_to_string(list_filter(j.labels, x -> x IN ('FORWARDED', 'AWAITING_COLLECTION')), ', ') || ')'
                ELSE '' END
            || ', never completed, since '
            || coalesce(strftime(coalesce(j.executed_at, j.created_at), '%Y-%m-%dT%H:%M:%SZ'), 'an unknown time')
            || ', longer than ' || CAST(CAST($stuck_after AS INTERVAL) AS VARCHAR)
    END AS detail,
    'server API payment ' || j.source_file || ' #' || j.source_line AS left_source
FROM one j
LEFT JOIN node_accounts s ON s.account = j.sender_address

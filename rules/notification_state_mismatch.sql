-- id: notification_state_mismatch
-- severity: P2
-- description: The latest webhook notification of a payment says a status the server API never held for it, or a terminal status (COMPLETED, FAILED, RETURNED) other than the one it holds now.
-- reads: notifications, payments
--
-- The latest notification is the one the server API created last (its
-- created_at; deliveries arrive out of order), among the fetched ones.
-- What the payment "held" is what the payments table can tell: its current
-- state; ACCEPTED when accepted_at, locked_at or executed_at is set; LOCKED
-- when locked_at or executed_at is set; PREPARED and EXECUTED when
-- executed_at is set (execution follows settlement); LOCK_DECLINED once
-- accepted and SETTLEMENT_DECLINED once locked (they leave no timestamp).
-- A terminal status is held only when it is the current state, or for
-- COMPLETED when the payment has since been RETURNED. Any other status,
-- unknown ones included, was never held. Judges the payments created in
-- the window that the API shows.
WITH latest AS (
    SELECT *
    FROM notifications
    WHERE fetch_status = 'FETCHED' AND payment_id IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY payment_id ORDER BY created_at DESC NULLS LAST, msg_id DESC) = 1
), judged AS (
    SELECT
        n.msg_id, n.payment_status, n.created_at AS notified_at, n.source_file AS notification_file, p.*,
        CASE
            WHEN n.payment_status = p.payment_state THEN true
            WHEN n.payment_status = 'ACCEPTED' THEN coalesce(p.accepted_at, p.locked_at, p.executed_at) IS NOT NULL
            WHEN n.payment_status = 'LOCK_DECLINED' THEN coalesce(p.accepted_at, p.locked_at) IS NOT NULL
            WHEN n.payment_status = 'LOCKED' THEN coalesce(p.locked_at, p.executed_at) IS NOT NULL
            WHEN n.payment_status = 'SETTLEMENT_DECLINED' THEN coalesce(p.locked_at, p.executed_at) IS NOT NULL
            WHEN n.payment_status IN ('PREPARED', 'EXECUTED') THEN p.executed_at IS NOT NULL
            WHEN n.payment_status = 'COMPLETED' THEN p.payment_state = 'RETURNED'
            ELSE false
        END AS held
    FROM latest n
    JOIN payments p ON p.payment_id = n.payment_id
    WHERE p.created_at >= $window_start AND p.created_at < $window_end
)
SELECT
    j.payment_id AS break_key,
    j.created_at AS event_at,
    j.payment_id,
    j.end_to_end_id,
    CASE WHEN s.account IS NOT NULL THEN j.sender_address ELSE j.receiver_address END AS account,
    'the latest notification (msg_id ' || j.msg_id || ', created '
        || coalesce(strftime(j.notified_at, '%Y-%m-%dT%H:%M:%SZ'), 'at an unknown time') || ') says '
        || coalesce(j.payment_status, 'null') || ', the server API says ' || coalesce(j.payment_state, 'null')
        || coalesce(' (modified ' || strftime(j.modified_at, '%Y-%m-%dT%H:%M:%SZ') || ')', '')
        || CASE WHEN j.payment_status IN ('COMPLETED', 'FAILED', 'RETURNED') THEN ': a terminal status it does not hold'
                ELSE ': a status it never held' END AS detail,
    'webhook notification ' || j.notification_file AS left_source,
    'server API payment ' || j.source_file || ' #' || j.source_line AS right_source
FROM judged j
LEFT JOIN node_accounts s ON s.account = j.sender_address
WHERE NOT j.held

-- id: notification_missing_transition
-- severity: P3
-- description: A payment that has webhook notifications reached a later state in the server API with no notification for it, after a grace period.
-- reads: notifications, payments
-- param: grace INTERVAL = 1 hour  (after the state was reached before its missing notification is a break)
--
-- The states a payment reached, and when, are what the payments table
-- tells, namely LOCKED (locked_at), EXECUTED (executed_at), COMPLETED
-- (completed_at), RETURNED (returned_at) and the current state (its own
-- timestamp, else modified_at). A state reached after the payment's first
-- fetched notification was created, and named by none of its fetched
-- notifications, is missing; states reached before notifications started
-- are not judged. One break per payment, listing the missing states, due a
-- grace period after the first of them. Judges the payments created in the
-- window.
WITH notified AS (
    SELECT payment_id, min(created_at) AS first_at, list(DISTINCT payment_status) AS statuses
    FROM notifications
    WHERE fetch_status = 'FETCHED' AND payment_id IS NOT NULL
    GROUP BY payment_id
), reached AS (
    SELECT payment_id, state, min(reached_at) AS reached_at
    FROM (
        SELECT payment_id, 'LOCKED' AS state, locked_at AS reached_at FROM payments
        UNION ALL SELECT payment_id, 'EXECUTED', executed_at FROM payments
        UNION ALL SELECT payment_id, 'COMPLETED', completed_at FROM payments
        UNION ALL SELECT payment_id, 'RETURNED', returned_at FROM payments
        UNION ALL SELECT payment_id, payment_state, modified_at FROM payments
    )
    WHERE reached_at IS NOT NULL AND state IS NOT NULL
      AND payment_id IN (SELECT payment_id FROM notified)
    GROUP BY payment_id, state
), missing AS (
    SELECT r.payment_id, list(r.state ORDER BY r.reached_at, r.state) AS states, min(r.reached_at) AS first_missing_at
    FROM reached r
    JOIN notified n ON n.payment_id = r.payment_id
    WHERE r.reached_at > n.first_at AND NOT list_contains(n.statuses, r.state)
    GROUP BY r.payment_id
)
SELECT
    p.payment_id AS break_key,
    p.created_at AS event_at,
    m.first_missing_at + CAST($grace AS INTERVAL) AS due_at,
    p.payment_id,
    p.end_to_end_id,
    CASE WHEN s.account IS NOT NULL THEN p.sender_address ELSE p.receiver_address END AS account,
    'the server API shows the payment reached ' || array_to_string(m.states, ', ') || ' (first at '
        || strftime(m.first_missing_at, '%Y-%m-%dT%H:%M:%SZ') || '), and no webhook notification says so; now '
        || coalesce(p.payment_state, 'null') AS detail,
    'server API payment ' || p.source_file || ' #' || p.source_line AS left_source,
    'webhook notifications of the payment (table notifications)' AS right_source
FROM missing m
JOIN payments p ON p.payment_id = m.payment_id
LEFT JOIN node_accounts s ON s.account = p.sender_address
WHERE p.created_at >= $window_start AND p.created_at < $window_end

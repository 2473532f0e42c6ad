-- id: notification_unfetched
-- severity: P3
-- description: A spooled webhook msg_id whose full notification could not be fetched after the run's retries (the server API answered 404, or kept failing).
-- reads: notifications
--
-- Judges the msg_ids first received in the window (receiver clock). Each
-- run fetches such an id again, so the break resolves once a fetch works.
SELECT
    msg_id AS break_key,
    first_received_at AS event_at,
    'msg_id ' || msg_id || ' was delivered ' || received_count || ' time(s) (last '
        || coalesce(strftime(last_received_at, '%Y-%m-%dT%H:%M:%SZ'), 'unknown') || ') but its notification is '
        || fetch_status || coalesce(': ' || fetch_error, '') AS detail,
    'webhook spool ' || receipts_file AS left_source,
    coalesce(request, 'GET /orchestration/payment/notification/' || msg_id) AS right_source
FROM notifications
WHERE fetch_status <> 'FETCHED'
  AND first_received_at >= $window_start AND first_received_at < $window_end

-- id: payment_state_mismatch
-- severity: P2
-- description: PAYMENT_OPS and the server API disagree on a terminal state (COMPLETED, FAILED, RETURNED) of one payment.
-- reads: payment_ops, payments
--
-- The report may be older than the API's state, so the API may have moved
-- on along the payment's lifecycle: a report that says EXECUTED or an
-- earlier state is never contradicted, and a COMPLETED payment may since
-- have been RETURNED. Where the report says a terminal state, any other
-- state in the API is a break. A payment the API does not show is not
-- judged.
SELECT
    o.network_payment_id AS break_key,
    o.quote_ts AS event_at,
    o.network_payment_id AS payment_id,
    o.end_to_end_id,
    CASE WHEN s.account IS NOT NULL THEN o.sender_address ELSE o.receiver_address END AS account,
    'PAYMENT_OPS says ' || o.payment_state || ', the server API says ' || coalesce(a.payment_state, 'null')
        || coalesce(' (modified ' || strftime(a.modified_at, '%Y-%m-%dT%H:%M:%SZ') || ')', '') AS detail,
    'PAYMENT_OPS report ' || o.report_id || ' line ' || o.source_line AS left_source,
    'server API payment ' || a.source_file || ' #' || a.source_line AS right_source
FROM payment_ops o
JOIN payments a ON a.payment_id = o.network_payment_id
LEFT JOIN node_accounts s ON s.account = o.sender_address
WHERE o.quote_ts >= $window_start AND o.quote_ts < $window_end
  AND o.payment_state IN ('COMPLETED', 'FAILED', 'RETURNED')
  AND a.payment_state IS DISTINCT FROM o.payment_state
  AND NOT (o.payment_state = 'COMPLETED' AND a.payment_state = 'RETURNED')

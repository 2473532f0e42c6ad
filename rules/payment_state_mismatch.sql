-- id: payment_state_mismatch
-- severity: P2
-- description: PAYMENT_OPS and the server API disagree on a terminal state (COMPLETED, FAILED, RETURNED) of one payment, unless the API's state is a later one reached after the report was generated.
-- reads: payment_ops, payments, report_files
--
-- A report's states are "state when queried" (DESIGN §3): a report that
-- says EXECUTED or an earlier state is never contradicted, and a COMPLETED
-- payment may since have been RETURNED, but only if the API's change
-- (returned_at, else modified_at) is later than the report's generation.
-- recon does not record the reportCreatedOn, so the generation is bounded
-- below by the end of the report's last day: a return before then is a
-- break (the report should have said RETURNED); a return after it may have
-- followed the report, and is not judged. Where the report says a terminal
-- state, any other state in the API is a break. A payment the API does not
-- show is not judged.
-- the payments whose states differ, joined on the id and state columns
-- alone; only those rows are read whole
WITH differ AS (
    SELECT o.rowid AS ops_row, a.rowid AS api_row
    FROM payment_ops o
    JOIN payments a ON a.payment_id = o.network_payment_id AND a.payment_state IS DISTINCT FROM o.payment_state
    WHERE o.quote_ts >= $window_start AND o.quote_ts < $window_end
      AND o.payment_state IN ('COMPLETED', 'FAILED', 'RETURNED')
)
SELECT
    o.network_payment_id AS break_key,
    o.quote_ts AS event_at,
    o.network_payment_id AS payment_id,
    o.end_to_end_id,
    CASE WHEN s.account IS NOT NULL THEN o.sender_address ELSE o.receiver_address END AS account,
    'PAYMENT_OPS says ' || o.payment_state || ', the server API says ' || coalesce(a.payment_state, 'null')
        || coalesce(' (modified ' || strftime(a.modified_at, '%Y-%m-%dT%H:%M:%SZ') || ')', '')
        || CASE WHEN a.payment_state = 'RETURNED'
            THEN '; returned ' || coalesce(strftime(a.returned_at, '%Y-%m-%dT%H:%M:%SZ'), 'at an unknown time')
                || ', before the report''s last day ended' -- not the day itself: the detail stays the same in overlapping runs
            ELSE '' END AS detail,
    'PAYMENT_OPS report ' || o.report_id || ' line ' || o.source_line AS left_source,
    'server API payment ' || a.source_file || ' #' || a.source_line AS right_source
FROM differ d
JOIN payment_ops o ON o.rowid = d.ops_row
JOIN payments a ON a.rowid = d.api_row
LEFT JOIN report_files f ON f.report_id = o.report_id
LEFT JOIN node_accounts s ON s.account = o.sender_address
-- a return the report may not have seen: after the end of its last day (no report row: not judged)
WHERE NOT (o.payment_state = 'COMPLETED' AND a.payment_state = 'RETURNED'
           AND (f.report_id IS NULL OR coalesce(a.returned_at, a.modified_at) >= CAST(f.window_to AS DATE) + 1))

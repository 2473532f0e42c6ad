-- id: row_quarantined
-- severity: P2
-- description: A source row could not be loaded (bad decimal or timestamp, wrong number of columns, invalid UTF-8, missing key, ...) and sits in quarantine: what it says is in no table and no other rule sees it.
-- reads: quarantine, source_files, runs
--
-- One break per quarantined row, keyed on its source, the sha256 of its file
-- and its line (and, in JSON, its path); detail is the reason, and the row's
-- text stays in quarantine.raw. A later generation of the report has another
-- sha256: loading it replaces the slice's quarantine rows, so the old break
-- is no longer found and resolves, and a row still malformed there is a new
-- break. The break's day is the row's own time when it could be read
-- (quote_ts, execution_timestamp, created_at), else the first day of its
-- slice, else the first day of the run that quarantined it.
WITH rows AS (
    SELECT
        q.source || '|' || coalesce(nullif(f.sha256, ''), q.source_file) || '|' || q.line
            || coalesce('|' || q.path, '') AS break_key,
        coalesce(q.row_time, CAST(q.window_from AS TIMESTAMPTZ), CAST(r.window_from AS TIMESTAMPTZ),
            CAST($window_start AS TIMESTAMPTZ)) AS event_at,
        q.payment_id,
        q.account,
        q.reason AS detail,
        q.source || ' ' || q.source_file || ' line ' || q.line || coalesce(' ' || q.path, '') AS left_source,
        q.run_id
    FROM quarantine q
    LEFT JOIN source_files f ON f.run_id = q.run_id AND f.source_file = q.source_file
    LEFT JOIN runs r ON r.run_id = q.run_id
)
SELECT break_key, event_at, payment_id, account, detail, left_source
FROM rows
WHERE event_at >= $window_start AND event_at < $window_end
-- the same file loaded again by another run gives the same row: one break
QUALIFY row_number() OVER (PARTITION BY break_key ORDER BY run_id DESC) = 1

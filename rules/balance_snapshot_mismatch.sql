-- id: balance_snapshot_mismatch
-- severity: P1
-- description: An account's balance in the latest balances snapshot differs from the balance_result of its last statement entry at or before the snapshot instant (the statement's opening_balance when it has none by then).
-- reads: balances, statements, statement_entries
-- param: tolerance DECIMAL(38,12) = 0.00  (largest difference that is not a break)
--
-- One break per account (key: the account), so a drift that lasts is one
-- break that ages. The latest local snapshot of each of this node's accounts
-- is compared with the loaded statement that describes the same instant: it
-- covers fetched_at (start_datetime <= fetched_at < end_datetime) and was
-- generated at or after it, so it holds every entry booked by then (the one
-- starting last when several do). A snapshot no such statement covers is not
-- judged. Entries after the snapshot instant are left out: a snapshot taken
-- between two entries agrees with the first. The snapshot instant is
-- usually after the window (the morning after); the break is dated on the
-- window's last day, or its first when the snapshot is older.
WITH snaps AS (
    SELECT n.account, b.fetched_at, b.balance, b.source_file, b.source_line
    FROM balances b
    JOIN node_accounts n ON n.account = b.account_name OR n.account = b.account_name || '@' || b.owner
    WHERE b.side = 'local'
    QUALIFY row_number() OVER (PARTITION BY n.account ORDER BY b.fetched_at DESC, b.source_line) = 1
),
frames AS (
    SELECT s.*, st.currency, st.start_datetime, st.opening_balance, st.source_file AS frame_file
    FROM snaps s
    JOIN statements st ON st.account = s.account AND st.start_datetime <= s.fetched_at AND s.fetched_at < st.end_datetime
        AND st.generated_at >= s.fetched_at
    QUALIFY row_number() OVER (PARTITION BY s.account ORDER BY st.start_datetime DESC, st.end_datetime DESC) = 1
),
tails AS (
    SELECT f.account,
           arg_max(e.balance_result, (e.created_at, e.transaction_id)) AS last_result,
           arg_max('entry ' || e.transaction_id || ' of ' || strftime(e.created_at, '%Y-%m-%dT%H:%M:%S.%gZ')
               || ' (' || e.source_file || ' #' || e.source_line || ')', (e.created_at, e.transaction_id)) AS last_entry
    FROM frames f
    JOIN statement_entries e ON e.account = f.account AND e.created_at >= f.start_datetime AND e.created_at <= f.fetched_at
    GROUP BY f.account
)
SELECT
    f.account AS break_key,
    greatest(least(f.fetched_at, $window_end - INTERVAL 1 millisecond), $window_start) AS event_at,
    f.account,
    f.currency,
    coalesce(t.last_result, f.opening_balance) AS expected,
    f.balance AS actual,
    'the balance ' || coalesce(amount_text(f.balance), 'null') || ' at ' || strftime(f.fetched_at, '%Y-%m-%dT%H:%M:%SZ')
        || ' is not the ledger''s ' || coalesce(amount_text(coalesce(t.last_result, f.opening_balance)), 'null')
        || CASE WHEN t.last_result IS NULL THEN ' (opening_balance: no entry by then)' ELSE ' (balance_result of its last entry by then)' END AS detail,
    'balances snapshot ' || f.source_file || ' #' || f.source_line AS left_source,
    coalesce(t.last_entry, 'opening_balance of statement ' || f.frame_file) AS right_source
FROM frames f
LEFT JOIN tails t USING (account)
WHERE f.balance IS NULL OR coalesce(t.last_result, f.opening_balance) IS NULL
   OR abs(f.balance - coalesce(t.last_result, f.opening_balance)) > CAST($tolerance AS DECIMAL(38,12))

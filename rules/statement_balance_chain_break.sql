-- id: statement_balance_chain_break
-- severity: P1
-- description: In one account, an entry's balance_result differs from the previous balance_result plus its balance_change (order created_at, transaction_id), or a statement's closing_balance differs from the end of its chain.
-- reads: statements, statement_entries
--
-- Each statement is a frame: its first entry follows its opening_balance, and
-- its closing_balance must equal its last balance_result (its opening_balance
-- when empty). Together the two checks say opening + sum(changes) = closing,
-- and name the entry where a chain breaks. An entry inside two loaded
-- statements is judged in the one starting last.
--
-- One sort of the entries (narrow rows: frame number, rowid, balances) finds
-- the breaks and each frame's last entry; the wide columns are read for those
-- few rows only. Only the frames that overlap the window are chained: every
-- break judged and every chain end checked lies in one, so a night reads its
-- window's statements, not the history's.
WITH frames AS (
    SELECT s.rowid AS frame, s.account, s.currency, s.start_datetime, s.end_datetime,
           s.opening_balance, s.closing_balance, s.source_file
    FROM statements s
    JOIN node_accounts n ON n.account = s.account
),
window_frames AS (
    SELECT * FROM frames WHERE start_datetime < $window_end AND end_datetime > $window_start
),
steps AS (
    SELECT
        f.frame, e.rowid AS entry, e.created_at, e.balance_change, e.balance_result,
        coalesce(lag(e.balance_result) OVER w, f.opening_balance) AS previous,
        lag(e.rowid) OVER w AS previous_entry,
        row_number() OVER w AS n,
        lead(e.rowid) OVER w IS NULL AS last
    FROM window_frames f
    JOIN statement_entries e ON e.account = f.account AND e.created_at >= f.start_datetime AND e.created_at < f.end_datetime
    WINDOW w AS (PARTITION BY f.frame ORDER BY e.created_at, e.transaction_id)
),
-- the breaks inside the window and the end of every frame
marks AS (
    SELECT *,
           created_at >= $window_start AND created_at < $window_end
               AND balance_result IS DISTINCT FROM previous + balance_change AS broken
    FROM steps
    WHERE last OR (created_at >= $window_start AND created_at < $window_end
                   AND balance_result IS DISTINCT FROM previous + balance_change)
),
-- keyed by frame and entry: an entry inside two frames is marked in both
previous_entries AS (
    SELECT m.frame, m.entry, p.source_file, p.source_line
    FROM marks m
    JOIN statement_entries p ON p.rowid = m.previous_entry
    WHERE m.broken
),
-- an entry is judged in the frame starting last that holds it (no later frame of its account holds it)
judged AS (
    SELECT f.account, f.currency, f.source_file AS frame_file, m.previous,
           e.transaction_id, e.transaction_type, e.end_to_end_id, e.created_at, e.balance_change, e.balance_result,
           e.source_file, e.source_line, p.source_file AS previous_file, p.source_line AS previous_line
    FROM marks m
    JOIN frames f ON f.frame = m.frame
    JOIN statement_entries e ON e.rowid = m.entry
    LEFT JOIN previous_entries p ON p.frame = m.frame AND p.entry = m.entry
    WHERE m.broken
      AND NOT EXISTS (
          SELECT 1 FROM frames l
          WHERE l.account = f.account AND m.created_at >= l.start_datetime AND m.created_at < l.end_datetime
            AND (l.start_datetime > f.start_datetime OR (l.start_datetime = f.start_datetime AND l.end_datetime > f.end_datetime)))
),
chain_ends AS (
    SELECT
        f.account, f.currency, f.start_datetime, f.end_datetime, f.opening_balance, f.closing_balance, f.source_file,
        coalesce(m.balance_result, f.opening_balance) AS chain_end,
        coalesce(m.n, 0) AS entries
    FROM frames f
    LEFT JOIN marks m ON m.frame = f.frame AND m.last
    WHERE f.start_datetime >= $window_start AND f.start_datetime < $window_end
)
SELECT
    account || '|' || transaction_id AS break_key,
    created_at AS event_at,
    CASE WHEN transaction_type = 'PAYMENT' THEN transaction_id END AS payment_id,
    end_to_end_id,
    account,
    currency,
    previous + balance_change AS expected,
    balance_result AS actual,
    'balance_result ' || coalesce(amount_text(balance_result), 'null') || ' is not the previous balance '
        || coalesce(amount_text(previous), 'null') || ' plus the change ' || coalesce(amount_text(balance_change), 'null') AS detail,
    coalesce('entry ' || previous_file || ' #' || previous_line, 'opening_balance of ' || frame_file) AS left_source,
    'entry ' || source_file || ' #' || source_line AS right_source
FROM judged
UNION ALL
SELECT
    account || '|statement ' || strftime(start_datetime, '%Y-%m-%dT%H:%M:%SZ') || '..' || strftime(end_datetime, '%Y-%m-%dT%H:%M:%SZ'),
    start_datetime,
    NULL,
    NULL,
    account,
    currency,
    chain_end,
    closing_balance,
    'closing_balance ' || coalesce(amount_text(closing_balance), 'null') || ' is not the end of the chain '
        || coalesce(amount_text(chain_end), 'null') || ' (opening_balance ' || coalesce(amount_text(opening_balance), 'null')
        || ', ' || entries || ' entries)',
    'statement ' || source_file,
    'statement ' || source_file
FROM chain_ends
WHERE closing_balance IS DISTINCT FROM chain_end

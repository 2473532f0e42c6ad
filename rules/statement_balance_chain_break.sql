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
WITH frames AS (
    SELECT s.*
    FROM statements s
    JOIN node_accounts n ON n.account = s.account
),
steps AS (
    SELECT
        f.account, f.currency, f.start_datetime, f.end_datetime, f.source_file AS frame_file,
        e.transaction_id, e.transaction_type, e.end_to_end_id, e.created_at, e.balance_change, e.balance_result,
        e.source_file, e.source_line,
        coalesce(lag(e.balance_result) OVER w, f.opening_balance) AS previous,
        lag(e.source_file) OVER w AS previous_file,
        lag(e.source_line) OVER w AS previous_line
    FROM frames f
    JOIN statement_entries e ON e.account = f.account AND e.created_at >= f.start_datetime AND e.created_at < f.end_datetime
    WINDOW w AS (PARTITION BY f.account, f.start_datetime, f.end_datetime ORDER BY e.created_at, e.transaction_id)
),
-- an entry is judged in the frame starting last that holds it (no later frame of its account holds it)
judged AS (
    SELECT *
    FROM steps s
    WHERE s.created_at >= $window_start AND s.created_at < $window_end
      AND s.balance_result IS DISTINCT FROM s.previous + s.balance_change
      AND NOT EXISTS (
          SELECT 1 FROM frames l
          WHERE l.account = s.account AND s.created_at >= l.start_datetime AND s.created_at < l.end_datetime
            AND (l.start_datetime > s.start_datetime OR (l.start_datetime = s.start_datetime AND l.end_datetime > s.end_datetime)))
),
chain_ends AS (
    SELECT
        f.account, f.currency, f.start_datetime, f.end_datetime, f.opening_balance, f.closing_balance, f.source_file,
        coalesce(arg_max(e.balance_result, (e.created_at, e.transaction_id)), f.opening_balance) AS chain_end,
        count(e.transaction_id) AS entries
    FROM frames f
    LEFT JOIN statement_entries e ON e.account = f.account AND e.created_at >= f.start_datetime AND e.created_at < f.end_datetime
    WHERE f.start_datetime >= $window_start AND f.start_datetime < $window_end
    GROUP BY f.account, f.currency, f.start_datetime, f.end_datetime, f.opening_balance, f.closing_balance, f.source_file
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

-- id: wallet_balance_drift
-- severity: P1
-- description: Per wallet, symbol, chain and UTC day of the window, the balance at the day's end minus the balance at its start differs from the confirmed deposits minus the confirmed outgoing quantities minus the network fees paid in that symbol in between.
-- reads: wallet_balances, wallet_transactions
--
-- A run takes each wallet's balances at every midnight of its window and at
-- its end (or the run's now, when the window reaches today), so the window's
-- end minus its start is the sum of its days, and each day is judged alone:
-- a break is dated on the day the balance moved and keeps its key (wallet,
-- symbol, chain, day) whatever window a run covers. A day goes from its
-- midnight snapshot to the latest snapshot at or before the next midnight.
-- A snapshot holds what was confirmed before its as_of, so the transactions
-- counted are those CONFIRMED with confirmed_at in [start, end). A (symbol,
-- chain) missing from a snapshot is zero there. Exact: no tolerance, 18
-- decimals; expected and actual carry 12 decimals like every break, the
-- detail is exact. epoch_ms is DuckDB's milliseconds since 1970.
WITH starts AS (
    SELECT DISTINCT vault_id, wallet_id, as_of AS start_at
    FROM wallet_balances
    WHERE as_of >= $window_start AND as_of < $window_end AND epoch_ms(as_of) % 86400000 = 0
),
days AS (
    SELECT s.vault_id, s.wallet_id, s.start_at, max(e.as_of) AS end_at
    FROM starts s
    JOIN wallet_balances e ON e.vault_id = s.vault_id AND e.wallet_id = s.wallet_id
        AND e.as_of > s.start_at AND e.as_of <= s.start_at + INTERVAL 1 DAY
    GROUP BY s.vault_id, s.wallet_id, s.start_at
),
held AS (
    SELECT d.vault_id, d.wallet_id, d.start_at, d.end_at, b.symbol, b.blockchain,
        sum(CASE WHEN b.as_of = d.start_at THEN b.quantity END) AS start_qty,
        sum(CASE WHEN b.as_of = d.end_at THEN b.quantity END) AS end_qty
    FROM days d
    JOIN wallet_balances b ON b.vault_id = d.vault_id AND b.wallet_id = d.wallet_id
        AND (b.as_of = d.start_at OR b.as_of = d.end_at)
    WHERE b.symbol IS NOT NULL
    GROUP BY d.vault_id, d.wallet_id, d.start_at, d.end_at, b.symbol, b.blockchain
),
movements AS (
    SELECT vault_id, wallet_id, symbol, blockchain, confirmed_at,
        CASE WHEN type = 'DEPOSIT' THEN quantity ELSE -quantity END AS qty
    FROM wallet_transactions WHERE status = 'CONFIRMED'
    UNION ALL
    SELECT vault_id, wallet_id, network_fee_symbol, blockchain, confirmed_at, -network_fee
    FROM wallet_transactions WHERE status = 'CONFIRMED' AND type <> 'DEPOSIT' AND network_fee IS NOT NULL
),
moves AS (
    SELECT d.vault_id, d.wallet_id, d.start_at, d.end_at, m.symbol, m.blockchain, sum(m.qty) AS net, count(*) AS n
    FROM days d
    JOIN movements m ON m.vault_id = d.vault_id AND m.wallet_id = d.wallet_id
        AND m.confirmed_at >= d.start_at AND m.confirmed_at < d.end_at
    GROUP BY d.vault_id, d.wallet_id, d.start_at, d.end_at, m.symbol, m.blockchain
),
judged AS (
    SELECT coalesce(h.vault_id, m.vault_id) AS vault_id, coalesce(h.wallet_id, m.wallet_id) AS wallet_id,
        coalesce(h.start_at, m.start_at) AS start_at, coalesce(h.end_at, m.end_at) AS end_at,
        coalesce(h.symbol, m.symbol) AS symbol, coalesce(h.blockchain, m.blockchain) AS blockchain,
        coalesce(h.start_qty, 0) AS start_qty, coalesce(h.end_qty, 0) AS end_qty,
        coalesce(m.net, 0) AS net, coalesce(m.n, 0) AS n
    FROM held h
    FULL JOIN moves m ON m.vault_id = h.vault_id AND m.wallet_id = h.wallet_id AND m.start_at = h.start_at
        AND m.symbol = h.symbol AND m.blockchain = h.blockchain
)
SELECT
    vault_id || '/' || wallet_id || '|' || symbol || '|' || blockchain || '|' || strftime(start_at, '%Y-%m-%d') AS break_key,
    start_at AS event_at,
    vault_id || '/' || wallet_id AS account,
    symbol AS currency,
    start_qty + net AS expected,
    end_qty AS actual,
    end_qty - start_qty - net AS difference,
    'on ' || blockchain || ': the balance moved from ' || rtrim(rtrim(CAST(start_qty AS VARCHAR), '0'), '.') || ' to '
        || rtrim(rtrim(CAST(end_qty AS VARCHAR), '0'), '.') || ' between ' || strftime(start_at, '%Y-%m-%dT%H:%M:%S.%gZ')
        || ' and ' || strftime(end_at, '%Y-%m-%dT%H:%M:%S.%gZ') || ', the ' || n || ' confirmed movements net '
        || rtrim(rtrim(CAST(net AS VARCHAR), '0'), '.') || ': unexplained '
        || rtrim(rtrim(CAST(end_qty - start_qty - net AS VARCHAR), '0'), '.') AS detail,
    'balances of ' || vault_id || '/' || wallet_id || ' at ' || strftime(start_at, '%Y-%m-%dT%H:%M:%S.%gZ') AS left_source,
    'balances of ' || vault_id || '/' || wallet_id || ' at ' || strftime(end_at, '%Y-%m-%dT%H:%M:%S.%gZ') AS right_source
FROM judged
WHERE end_qty - start_qty <> net

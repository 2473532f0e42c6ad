-- id: wallet_limit_breach
-- severity: P1
-- description: An outgoing wallet transaction exceeds a PER_TX limit that applies to it, or is the one that takes an applicable PER_DAY total (UTC day) over its limit.
-- reads: wallet_limit_usage, wallet_transactions, wallet_limits, wallet_limit_matchers
--
-- wallet_limit_usage (sql/migrations/0030_wallet.sql) says which limits apply
-- to which transaction (DESIGN.md §9: symbol, chain, every matcher) and keeps
-- the running total of each limit's UTC day; it reads the three wallet tables
-- declared above, so a gap in any of them holds this rule. Every applicable
-- limit is judged, general and scoped: one break per transaction and limit.
-- A quantity equal to the limit, or a day total that reaches it, is no break.
-- Limits of an unknown type are not judged (wallet_limit_issues lists them).
-- expected/actual carry 12 decimals like every break; the detail is exact.
SELECT
    u.vault_id || '/' || u.wallet_id || '|' || u.transaction_id || '|' || u.limit_id AS break_key,
    u.created_at AS event_at,
    u.transaction_id AS payment_id,
    u.vault_id || '/' || u.wallet_id AS account,
    u.symbol AS currency,
    u.limit_qty AS expected,
    CASE u.limit_type WHEN 'PER_TX' THEN u.quantity ELSE u.day_total END AS actual,
    u.limit_type || ' limit ' || u.limit_id || ' of ' || rtrim(rtrim(CAST(u.limit_qty AS VARCHAR), '0'), '.') || ' ' || u.symbol
        || coalesce(' on ' || l.blockchain, '') || ' [' || u.matchers || '] '
        || CASE u.limit_type
            WHEN 'PER_TX' THEN 'exceeded by a transaction of ' || rtrim(rtrim(CAST(u.quantity AS VARCHAR), '0'), '.')
            ELSE 'exceeded on ' || CAST(u.utc_day AS VARCHAR) || ' (UTC): this transaction of '
                || rtrim(rtrim(CAST(u.quantity AS VARCHAR), '0'), '.') || ' takes the day''s total to '
                || rtrim(rtrim(CAST(u.day_total AS VARCHAR), '0'), '.')
        END AS detail,
    'limit ' || l.source_file || ' #' || l.source_line AS left_source,
    'transaction ' || t.source_file || ' #' || t.source_line AS right_source
FROM wallet_limit_usage u
JOIN wallet_limits l ON l.vault_id = u.vault_id AND l.wallet_id = u.wallet_id AND l.limit_id = u.limit_id
JOIN wallet_transactions t ON t.vault_id = u.vault_id AND t.wallet_id = u.wallet_id AND t.transaction_id = u.transaction_id
WHERE u.created_at >= $window_start AND u.created_at < $window_end
  AND CASE u.limit_type
      WHEN 'PER_TX' THEN u.quantity > u.limit_qty
      ELSE u.day_total > u.limit_qty AND u.day_total - u.quantity <= u.limit_qty
  END

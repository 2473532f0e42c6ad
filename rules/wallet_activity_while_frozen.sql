-- id: wallet_activity_while_frozen
-- severity: P1
-- description: A wallet transaction (deposit or outgoing) confirmed in the window on a chain the wallet record lists as frozen.
-- reads: wallet_transactions, wallets
--
-- The wallet record gives the chains frozen when it was fetched, without
-- since when: a chain frozen after the window also flags the window's
-- activity on it (docs/rules.md). list_contains is DuckDB's list membership.
SELECT
    t.vault_id || '/' || t.wallet_id || '|' || t.transaction_id AS break_key,
    t.confirmed_at AS event_at,
    t.transaction_id AS payment_id,
    t.vault_id || '/' || t.wallet_id AS account,
    t.symbol AS currency,
    0 AS expected,
    t.quantity AS actual,
    t.type || ' of ' || rtrim(rtrim(CAST(t.quantity AS VARCHAR), '0'), '.') || ' ' || t.symbol || ' confirmed at '
        || strftime(t.confirmed_at, '%Y-%m-%dT%H:%M:%S.%gZ') || ' on ' || t.blockchain
        || ', which the wallet record lists as frozen' AS detail,
    'wallet ' || w.source_file AS left_source,
    'transaction ' || t.source_file || ' #' || t.source_line AS right_source
FROM wallet_transactions t
JOIN wallets w ON w.vault_id = t.vault_id AND w.wallet_id = t.wallet_id
WHERE t.status = 'CONFIRMED' AND t.confirmed_at >= $window_start AND t.confirmed_at < $window_end
  AND list_contains(w.frozen_chains, t.blockchain)

-- id: wallet_sign_for_limit_missing
-- severity: P2
-- description: A wallet signs for a multisig wallet (a transaction with sign_for) and has no limit with a SIGN_FOR matcher for that address (spec rule 5).
-- reads: wallet_transactions, wallet_limit_matchers
--
-- Any transaction of the window (by created_at) that names a sign_for,
-- whatever its status: the signature is what needs the scoped limit.
-- Addresses compare case-insensitively.
SELECT
    t.vault_id || '/' || t.wallet_id || '|' || t.transaction_id AS break_key,
    t.created_at AS event_at,
    t.transaction_id AS payment_id,
    t.vault_id || '/' || t.wallet_id AS account,
    t.symbol AS currency,
    'signed for multisig wallet ' || t.sign_for || coalesce(' on ' || t.blockchain, '') || ' (' || t.status
        || ') without a limit whose SIGN_FOR matcher names it' AS detail,
    'limits of ' || t.vault_id || '/' || t.wallet_id AS left_source,
    'transaction ' || t.source_file || ' #' || t.source_line AS right_source
FROM wallet_transactions t
WHERE t.created_at >= $window_start AND t.created_at < $window_end
  AND coalesce(t.sign_for, '') <> ''
  AND NOT EXISTS (
      SELECT 1 FROM wallet_limit_matchers m
      WHERE m.vault_id = t.vault_id AND m.wallet_id = t.wallet_id AND m.matcher_type = 'SIGN_FOR'
        AND lower(m.matcher_value) = lower(t.sign_for))

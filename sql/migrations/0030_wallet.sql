-- The wallet service (spec wallet.md, DESIGN.md §9): custody wallets in vaults, their balances per
-- chain at given instants, their transactions and their limits with matchers. Quantities are
-- DECIMAL(38,18): EVM tokens carry 18 decimals (1 wei = 0.000000000000000001 ETH), which
-- DECIMAL(38,12) would round; 38 digits leave 20 integer digits (up to 10^20 - 1 of a token), more
-- than any supply of the listed assets in whole units. Fiat values stay DECIMAL(38,12) like every
-- amount. Every row keeps its provenance (source_file, source_line, run_id; see source_files).

CREATE TABLE wallets (
    vault_id      VARCHAR NOT NULL,
    wallet_id     VARCHAR NOT NULL,
    address       VARCHAR,
    kind          VARCHAR,
    frozen_chains VARCHAR[],
    extra       JSON,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE wallets IS 'Wallet records of the wallet service (GET {wallet}/v2/vaults/{vault}/wallets/{wallet}), as fetched by the latest run. Key: vault_id, wallet_id.';
COMMENT ON COLUMN wallets.vault_id IS 'Vault holding the wallet (RECON_WALLETS vault_id).';
COMMENT ON COLUMN wallets.wallet_id IS 'Wallet id (RECON_WALLETS wallet_id).';
COMMENT ON COLUMN wallets.address IS 'Blockchain address of the wallet; an EVM address is valid on every EVM chain.';
COMMENT ON COLUMN wallets.kind IS 'EVM, XRP, BTC or SOL, verbatim: only EVM wallets take a blockchain parameter.';
COMMENT ON COLUMN wallets.frozen_chains IS 'Chains on which the wallet is frozen when fetched (upper case names); activity confirmed there is a break (wallet_activity_while_frozen).';
COMMENT ON COLUMN wallets.extra IS 'Fields of the record that recon does not know, as JSON.';
COMMENT ON COLUMN wallets.source_file IS 'Provenance: raw file wallets/<vault>/<wallet>/wallet.json.';
COMMENT ON COLUMN wallets.source_line IS 'Provenance: 1 (the file is one object).';
COMMENT ON COLUMN wallets.run_id IS 'Provenance: run that loaded the record (see source_files).';

CREATE TABLE wallet_balances (
    vault_id      VARCHAR NOT NULL,
    wallet_id     VARCHAR NOT NULL,
    as_of         TIMESTAMPTZ NOT NULL,
    symbol        VARCHAR,
    blockchain    VARCHAR,
    quantity      DECIMAL(38,18),
    fiat_value    DECIMAL(38,12),
    fiat_currency VARCHAR,
    origin_chain  VARCHAR,
    extra       JSON,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE wallet_balances IS 'Balances snapshots of each wallet per symbol and chain (GET .../balances?as_of=): every run takes one at each midnight of its window, one at its end (or now, if sooner) and one now; every snapshot is kept. Key: vault_id, wallet_id, as_of; a reload of the same instant replaces it. A snapshot without any balance is one row whose symbol is null.';
COMMENT ON COLUMN wallet_balances.vault_id IS 'Vault of the wallet.';
COMMENT ON COLUMN wallet_balances.wallet_id IS 'Wallet id.';
COMMENT ON COLUMN wallet_balances.as_of IS 'Instant of the snapshot, UTC: it holds the transactions confirmed before it (not at it).';
COMMENT ON COLUMN wallet_balances.symbol IS 'Asset symbol, upper case (USDC, ETH, POL, XRP, ...); null for the row of a snapshot without balances.';
COMMENT ON COLUMN wallet_balances.blockchain IS 'Chain the balance is on, upper case (ETHEREUM, ARBITRUM, POLYGON, BASE, BNB, AVALANCHE, ONEMONEY, ...).';
COMMENT ON COLUMN wallet_balances.quantity IS 'Quantity held, exact to 18 decimals.';
COMMENT ON COLUMN wallet_balances.fiat_value IS 'Value of the quantity in fiat_currency, as the service reports it.';
COMMENT ON COLUMN wallet_balances.fiat_currency IS 'Currency of fiat_value, upper case.';
COMMENT ON COLUMN wallet_balances.origin_chain IS 'Chain of origin of the asset (a bridged asset differs from blockchain).';
COMMENT ON COLUMN wallet_balances.extra IS 'Fields of the balance that recon does not know, as JSON.';
COMMENT ON COLUMN wallet_balances.source_file IS 'Provenance: raw file wallets/<vault>/<wallet>/balances_<as_of>.json or balances_now.json.';
COMMENT ON COLUMN wallet_balances.source_line IS 'Provenance: position of the balance in balances[], from 1.';
COMMENT ON COLUMN wallet_balances.run_id IS 'Provenance: run that loaded the snapshot (see source_files).';

CREATE TABLE wallet_transactions (
    vault_id            VARCHAR NOT NULL,
    wallet_id           VARCHAR NOT NULL,
    transaction_id      VARCHAR NOT NULL,
    type                VARCHAR NOT NULL,
    status              VARCHAR NOT NULL,
    symbol              VARCHAR,
    quantity            DECIMAL(38,18),
    blockchain          VARCHAR,
    source_address      VARCHAR,
    destination_address VARCHAR,
    initiator_type      VARCHAR,
    initiator_id        VARCHAR,
    transaction_type    VARCHAR,
    sign_for            VARCHAR,
    tx_hash             VARCHAR,
    network_fee         DECIMAL(38,18),
    network_fee_symbol  VARCHAR,
    created_at          TIMESTAMPTZ,
    confirmed_at        TIMESTAMPTZ,
    extra       JSON,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE wallet_transactions IS 'Transactions of each wallet (GET .../transactions by created_at, from a day before the run''s window to its end). Key: vault_id, wallet_id, transaction_id; a newer fetch replaces the row.';
COMMENT ON COLUMN wallet_transactions.vault_id IS 'Vault of the wallet.';
COMMENT ON COLUMN wallet_transactions.wallet_id IS 'Wallet id.';
COMMENT ON COLUMN wallet_transactions.transaction_id IS 'Transaction id of the wallet service.';
COMMENT ON COLUMN wallet_transactions.type IS 'TRANSFER or RAW (outgoing) or DEPOSIT (incoming).';
COMMENT ON COLUMN wallet_transactions.status IS 'PENDING, CONFIRMED, FAILED or REJECTED when fetched.';
COMMENT ON COLUMN wallet_transactions.symbol IS 'Asset symbol, upper case.';
COMMENT ON COLUMN wallet_transactions.quantity IS 'Quantity moved, exact to 18 decimals.';
COMMENT ON COLUMN wallet_transactions.blockchain IS 'Chain of the transaction, upper case.';
COMMENT ON COLUMN wallet_transactions.source_address IS 'Sending address.';
COMMENT ON COLUMN wallet_transactions.destination_address IS 'Receiving address (the counterparty of an outgoing transaction).';
COMMENT ON COLUMN wallet_transactions.initiator_type IS 'initiator.type: USER or API_CREDENTIAL; null for a deposit.';
COMMENT ON COLUMN wallet_transactions.initiator_id IS 'initiator.id: the user or API credential id (uuid).';
COMMENT ON COLUMN wallet_transactions.transaction_type IS 'Business type of the transaction (for example a ledger transaction type), matched by TRANSACTION_TYPE matchers.';
COMMENT ON COLUMN wallet_transactions.sign_for IS 'Address of the multisig wallet this wallet signed for, when it did.';
COMMENT ON COLUMN wallet_transactions.tx_hash IS 'Hash of the transaction on its chain.';
COMMENT ON COLUMN wallet_transactions.network_fee IS 'Network fee paid, in network_fee_symbol, exact to 18 decimals.';
COMMENT ON COLUMN wallet_transactions.network_fee_symbol IS 'Symbol the network fee was paid in (the chain''s native coin), upper case.';
COMMENT ON COLUMN wallet_transactions.created_at IS 'Creation time, UTC; limits count per UTC day of it.';
COMMENT ON COLUMN wallet_transactions.confirmed_at IS 'Confirmation time, UTC; null until CONFIRMED.';
COMMENT ON COLUMN wallet_transactions.extra IS 'Fields of the transaction that recon does not know, as JSON.';
COMMENT ON COLUMN wallet_transactions.source_file IS 'Provenance: raw page file wallets/<vault>/<wallet>/transactions_<from>_<to>_p<NNNN>.json.';
COMMENT ON COLUMN wallet_transactions.source_line IS 'Provenance: element number in the page''s content, from 1.';
COMMENT ON COLUMN wallet_transactions.run_id IS 'Provenance: run that loaded the transaction (see source_files).';

CREATE TABLE wallet_limits (
    vault_id    VARCHAR NOT NULL,
    wallet_id   VARCHAR NOT NULL,
    limit_id    VARCHAR NOT NULL,
    limit_type  VARCHAR,
    limit_qty   DECIMAL(38,18),
    symbol      VARCHAR,
    blockchain  VARCHAR,
    extra       JSON,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE wallet_limits IS 'Limits (policy rules) of each wallet as fetched by the latest run (GET .../policy-rules/limits; camelCase or snake_case names). Key: vault_id, wallet_id, limit_id; a wallet''s limits are replaced whole. Problems (unknown type, two initiator matchers) are listed by wallet_limit_issues.';
COMMENT ON COLUMN wallet_limits.vault_id IS 'Vault of the wallet.';
COMMENT ON COLUMN wallet_limits.wallet_id IS 'Wallet id.';
COMMENT ON COLUMN wallet_limits.limit_id IS 'limit_id / limitId; #<position> when the service gives none.';
COMMENT ON COLUMN wallet_limits.limit_type IS 'limit_type / limitType, verbatim: PER_TX and PER_DAY are checked; any other value is kept and reported, never applied.';
COMMENT ON COLUMN wallet_limits.limit_qty IS 'limit_qty / limitQty: the quantity a transaction (PER_TX) or a UTC day''s total (PER_DAY) may reach but not exceed.';
COMMENT ON COLUMN wallet_limits.symbol IS 'Asset the limit applies to, upper case.';
COMMENT ON COLUMN wallet_limits.blockchain IS 'Chain the limit is restricted to; null: every chain.';
COMMENT ON COLUMN wallet_limits.extra IS 'Fields of the limit that recon does not know, as JSON.';
COMMENT ON COLUMN wallet_limits.source_file IS 'Provenance: raw file wallets/<vault>/<wallet>/limits.json.';
COMMENT ON COLUMN wallet_limits.source_line IS 'Provenance: position of the limit in the array, from 1.';
COMMENT ON COLUMN wallet_limits.run_id IS 'Provenance: run that loaded the limit (see source_files).';

CREATE TABLE wallet_limit_matchers (
    vault_id      VARCHAR NOT NULL,
    wallet_id     VARCHAR NOT NULL,
    limit_id      VARCHAR NOT NULL,
    matcher_type  VARCHAR NOT NULL,
    matcher_value VARCHAR,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE wallet_limit_matchers IS 'Matchers of the limits, one row each: a limit applies only to transactions that satisfy all of its matchers; a limit without any applies to every transaction.';
COMMENT ON COLUMN wallet_limit_matchers.vault_id IS 'Vault of the wallet.';
COMMENT ON COLUMN wallet_limit_matchers.wallet_id IS 'Wallet id.';
COMMENT ON COLUMN wallet_limit_matchers.limit_id IS 'Limit the matcher belongs to (wallet_limits.limit_id).';
COMMENT ON COLUMN wallet_limit_matchers.matcher_type IS 'USER, API_CREDENTIAL (initiator), COUNTERPARTY (destination address), TRANSACTION_TYPE or SIGN_FOR (multisig address), verbatim; another type never holds and is reported.';
COMMENT ON COLUMN wallet_limit_matchers.matcher_value IS 'The user or credential id, address or transaction type the matcher holds for.';
COMMENT ON COLUMN wallet_limit_matchers.source_file IS 'Provenance: raw file wallets/<vault>/<wallet>/limits.json.';
COMMENT ON COLUMN wallet_limit_matchers.source_line IS 'Provenance: position of its limit in the array, from 1.';
COMMENT ON COLUMN wallet_limit_matchers.run_id IS 'Provenance: run that loaded the matcher (see source_files).';

-- Which limits apply to which outgoing transaction (DESIGN.md §9), with the running UTC-day total
-- per limit: the one statement of limit semantics, read by wallet_limit_breach and wallet_trace.
-- Addresses compare case-insensitively (EVM checksum case carries no meaning).
CREATE VIEW wallet_limit_usage AS
SELECT t.vault_id, t.wallet_id, t.transaction_id, t.created_at, t.symbol, t.blockchain, t.quantity,
    l.limit_id, l.limit_type, l.limit_qty,
    CAST(timezone('UTC', t.created_at) AS DATE) AS utc_day,
    sum(t.quantity) OVER (PARTITION BY t.vault_id, t.wallet_id, l.limit_id, CAST(timezone('UTC', t.created_at) AS DATE)
        ORDER BY t.created_at, t.transaction_id ROWS UNBOUNDED PRECEDING) AS day_total,
    (SELECT coalesce(string_agg(m.matcher_type || '=' || coalesce(m.matcher_value, ''), ', ' ORDER BY m.matcher_type, m.matcher_value), '(none: general)')
        FROM wallet_limit_matchers m
        WHERE m.vault_id = l.vault_id AND m.wallet_id = l.wallet_id AND m.limit_id = l.limit_id) AS matchers
FROM wallet_transactions t
JOIN wallet_limits l ON l.vault_id = t.vault_id AND l.wallet_id = t.wallet_id AND l.symbol = t.symbol
    AND (l.blockchain IS NULL OR l.blockchain = t.blockchain)
WHERE t.type IN ('TRANSFER', 'RAW') AND t.status IN ('CONFIRMED', 'PENDING') AND l.limit_type IN ('PER_TX', 'PER_DAY')
    AND NOT EXISTS (SELECT 1 FROM wallet_limit_matchers m
        WHERE m.vault_id = l.vault_id AND m.wallet_id = l.wallet_id AND m.limit_id = l.limit_id
            AND NOT coalesce(CASE m.matcher_type
                WHEN 'USER' THEN t.initiator_type = 'USER' AND t.initiator_id = m.matcher_value
                WHEN 'API_CREDENTIAL' THEN t.initiator_type = 'API_CREDENTIAL' AND t.initiator_id = m.matcher_value
                WHEN 'COUNTERPARTY' THEN lower(t.destination_address) = lower(m.matcher_value)
                WHEN 'TRANSACTION_TYPE' THEN t.transaction_type = m.matcher_value
                WHEN 'SIGN_FOR' THEN lower(t.sign_for) = lower(m.matcher_value)
                ELSE false END, false));
COMMENT ON VIEW wallet_limit_usage IS 'One row per outgoing (TRANSFER, RAW) CONFIRMED or PENDING wallet transaction and PER_TX or PER_DAY limit that applies to it (symbol, chain and every matcher hold), with the running total of the limit''s UTC day up to and including the transaction.';
COMMENT ON COLUMN wallet_limit_usage.vault_id IS 'Vault of the wallet.';
COMMENT ON COLUMN wallet_limit_usage.wallet_id IS 'Wallet id.';
COMMENT ON COLUMN wallet_limit_usage.transaction_id IS 'The transaction.';
COMMENT ON COLUMN wallet_limit_usage.created_at IS 'Its creation time, UTC.';
COMMENT ON COLUMN wallet_limit_usage.symbol IS 'Its symbol.';
COMMENT ON COLUMN wallet_limit_usage.blockchain IS 'Its chain.';
COMMENT ON COLUMN wallet_limit_usage.quantity IS 'Its quantity.';
COMMENT ON COLUMN wallet_limit_usage.limit_id IS 'A limit that applies to it.';
COMMENT ON COLUMN wallet_limit_usage.limit_type IS 'PER_TX or PER_DAY.';
COMMENT ON COLUMN wallet_limit_usage.limit_qty IS 'The limit''s quantity.';
COMMENT ON COLUMN wallet_limit_usage.utc_day IS 'UTC day of created_at: the day a PER_DAY limit counts it in.';
COMMENT ON COLUMN wallet_limit_usage.day_total IS 'Sum of the quantities of the transactions the limit applies to on utc_day, by created_at then transaction_id, up to and including this one.';
COMMENT ON COLUMN wallet_limit_usage.matchers IS 'The limit''s matchers as TYPE=value, sorted, or (none: general).';

CREATE VIEW wallet_trace AS
SELECT t.vault_id, t.wallet_id, t.transaction_id, t.type, t.status, t.symbol, t.quantity, t.blockchain,
    t.initiator_type, t.initiator_id, t.destination_address, t.transaction_type, t.sign_for,
    t.network_fee, t.network_fee_symbol, t.created_at, t.confirmed_at,
    list_contains(w.frozen_chains, t.blockchain) AS on_frozen_chain,
    (SELECT list({'limit_id': u.limit_id, 'limit_type': u.limit_type, 'limit_qty': u.limit_qty, 'matchers': u.matchers,
            'day_total': u.day_total,
            'exceeded': CASE u.limit_type WHEN 'PER_TX' THEN u.quantity > u.limit_qty ELSE u.day_total > u.limit_qty END}
            ORDER BY u.limit_id)
        FROM wallet_limit_usage u
        WHERE u.vault_id = t.vault_id AND u.wallet_id = t.wallet_id AND u.transaction_id = t.transaction_id) AS limits,
    t.source_file, t.run_id
FROM wallet_transactions t LEFT JOIN wallets w USING (vault_id, wallet_id);
COMMENT ON VIEW wallet_trace IS 'One row per wallet transaction with the limits that applied to it (wallet_limit_usage) and the running UTC-day total per limit; empty limits for deposits and for transactions no limit applies to.';
COMMENT ON COLUMN wallet_trace.vault_id IS 'Vault of the wallet.';
COMMENT ON COLUMN wallet_trace.wallet_id IS 'Wallet id.';
COMMENT ON COLUMN wallet_trace.transaction_id IS 'The transaction.';
COMMENT ON COLUMN wallet_trace.type IS 'TRANSFER, RAW or DEPOSIT.';
COMMENT ON COLUMN wallet_trace.status IS 'PENDING, CONFIRMED, FAILED or REJECTED.';
COMMENT ON COLUMN wallet_trace.symbol IS 'Asset symbol.';
COMMENT ON COLUMN wallet_trace.quantity IS 'Quantity moved.';
COMMENT ON COLUMN wallet_trace.blockchain IS 'Chain.';
COMMENT ON COLUMN wallet_trace.initiator_type IS 'USER or API_CREDENTIAL.';
COMMENT ON COLUMN wallet_trace.initiator_id IS 'User or credential id.';
COMMENT ON COLUMN wallet_trace.destination_address IS 'Destination address.';
COMMENT ON COLUMN wallet_trace.transaction_type IS 'Business transaction type.';
COMMENT ON COLUMN wallet_trace.sign_for IS 'Multisig address signed for.';
COMMENT ON COLUMN wallet_trace.network_fee IS 'Network fee paid.';
COMMENT ON COLUMN wallet_trace.network_fee_symbol IS 'Symbol of the fee.';
COMMENT ON COLUMN wallet_trace.created_at IS 'Creation time, UTC.';
COMMENT ON COLUMN wallet_trace.confirmed_at IS 'Confirmation time, UTC.';
COMMENT ON COLUMN wallet_trace.on_frozen_chain IS 'True when the wallet record lists the transaction''s chain as frozen.';
COMMENT ON COLUMN wallet_trace.limits IS 'List of {limit_id, limit_type, limit_qty, matchers, day_total, exceeded} for each limit that applied.';
COMMENT ON COLUMN wallet_trace.source_file IS 'Provenance: raw page file of the transaction.';
COMMENT ON COLUMN wallet_trace.run_id IS 'Provenance: run that loaded it.';

CREATE VIEW wallet_limit_issues AS
SELECT vault_id, wallet_id, limit_id, issue FROM (
    SELECT l.vault_id, l.wallet_id, l.limit_id,
        'unknown limit type ' || coalesce(l.limit_type, '(none)') || ': kept, not checked' AS issue
    FROM wallet_limits l WHERE l.limit_type IS NULL OR l.limit_type NOT IN ('PER_TX', 'PER_DAY')
    UNION ALL
    SELECT m.vault_id, m.wallet_id, m.limit_id,
        'invalid configuration: ' || CAST(count(*) AS VARCHAR) || ' ' || g.kind || ' matchers (' ||
        string_agg(m.matcher_type || '=' || coalesce(m.matcher_value, ''), ', ' ORDER BY m.matcher_type, m.matcher_value) ||
        '), at most one is allowed' AS issue
    FROM wallet_limit_matchers m,
        LATERAL (SELECT CASE WHEN m.matcher_type IN ('USER', 'API_CREDENTIAL') THEN 'initiator'
            WHEN m.matcher_type = 'COUNTERPARTY' THEN 'counterparty'
            WHEN m.matcher_type = 'TRANSACTION_TYPE' THEN 'transaction type' END AS kind) g
    WHERE g.kind IS NOT NULL
    GROUP BY m.vault_id, m.wallet_id, m.limit_id, g.kind HAVING count(*) > 1
    UNION ALL
    SELECT m.vault_id, m.wallet_id, m.limit_id, 'unknown matcher type ' || m.matcher_type || ': the limit never applies'
    FROM wallet_limit_matchers m
    WHERE m.matcher_type NOT IN ('USER', 'API_CREDENTIAL', 'COUNTERPARTY', 'TRANSACTION_TYPE', 'SIGN_FOR')
) ORDER BY vault_id, wallet_id, limit_id, issue;
COMMENT ON VIEW wallet_limit_issues IS 'Limits the rules cannot apply as configured: an unknown limit_type (kept verbatim, not checked), more than one initiator, counterparty or transaction type matcher (spec rule 1: invalid configuration), an unknown matcher type. summary.json lists them under wallet_limit_issues.';
COMMENT ON COLUMN wallet_limit_issues.vault_id IS 'Vault of the wallet.';
COMMENT ON COLUMN wallet_limit_issues.wallet_id IS 'Wallet id.';
COMMENT ON COLUMN wallet_limit_issues.limit_id IS 'The limit.';
COMMENT ON COLUMN wallet_limit_issues.issue IS 'What is wrong with it.';

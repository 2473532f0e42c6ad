-- Sources beyond the reports and statements: liquidations with their trades and executions
-- (liquidation service), and the server API's payments, transfers, balances and fee
-- configuration; plus source_files, the ledger of every raw file a run loaded.
-- Each row keeps its provenance: source_file, source_line and run_id (joined to source_files
-- for the request and the sha256 of the file).

CREATE TABLE source_files (
    run_id        VARCHAR NOT NULL,
    source        VARCHAR NOT NULL,
    source_file   VARCHAR NOT NULL,
    request       VARCHAR,
    sha256        VARCHAR,
    size_bytes    BIGINT,
    fetched_at    TIMESTAMPTZ,
    window_from   DATE,
    window_to     DATE,
    account       VARCHAR,
    report_id     VARCHAR,
    rows_loaded   BIGINT NOT NULL,
    rows_quarantined BIGINT NOT NULL,
    PRIMARY KEY (run_id, source_file)
);
COMMENT ON TABLE source_files IS 'Every raw file a run loaded (reports, statement pages, liquidations, payments, transfers, balances, fees), with the request that produced it and its sha256. Join on (run_id, source_file) from any source row.';
COMMENT ON COLUMN source_files.run_id IS 'Run that loaded the file.';
COMMENT ON COLUMN source_files.source IS 'payment_ops, recon, failure_conversion, statement, liquidation, payment, transfer, balance or fee.';
COMMENT ON COLUMN source_files.source_file IS 'Path of the raw file inside the run''s archived inputs (inputs/<path>).';
COMMENT ON COLUMN source_files.request IS 'Method and URL that produced the file (no secrets).';
COMMENT ON COLUMN source_files.sha256 IS 'SHA-256 of the raw file, hex (empty for an EMPTY or FAILED report).';
COMMENT ON COLUMN source_files.size_bytes IS 'Size of the raw file in bytes.';
COMMENT ON COLUMN source_files.fetched_at IS 'Time of the response (its Date header), UTC, when recorded.';
COMMENT ON COLUMN source_files.window_from IS 'First UTC day the file covers, for windowed sources.';
COMMENT ON COLUMN source_files.window_to IS 'Last UTC day the file covers (inclusive).';
COMMENT ON COLUMN source_files.account IS 'Account address, for statement pages.';
COMMENT ON COLUMN source_files.report_id IS 'reportId, for reports.';
COMMENT ON COLUMN source_files.rows_loaded IS 'Rows the file gave to its tables (a liquidation counts its trades and executions too).';
COMMENT ON COLUMN source_files.rows_quarantined IS 'Rows of the file sent to quarantine.';

CREATE TABLE liquidations (
    liquidation_id              VARCHAR NOT NULL,
    account_id                  VARCHAR,
    created_at                  TIMESTAMPTZ,
    modified_at                 TIMESTAMPTZ,
    unique_reference_id         VARCHAR,
    network_payment_id          VARCHAR,
    network_payment_created_at  TIMESTAMPTZ,
    network_sender_address      VARCHAR,
    network_receiver_address    VARCHAR,
    destination_amount          DECIMAL(38,12),
    destination_currency        VARCHAR,
    destination_venue           VARCHAR,
    estimate_type               VARCHAR,
    expires_at                  TIMESTAMPTZ,
    liquidation_source          VARCHAR,
    status                      VARCHAR,
    execution_strategy_max_amount_per_trade   DECIMAL(38,12),
    execution_strategy_minimum_trade_interval DECIMAL(38,12),
    execution_summary_total_xrp           DECIMAL(38,12),
    execution_summary_total_fiat          DECIMAL(38,12),
    execution_summary_total_slippage      DECIMAL(38,12),
    execution_summary_total_sender_fees   DECIMAL(38,12),
    execution_summary_total_receiver_fees DECIMAL(38,12),
    execution_summary_total_trades        DECIMAL(38,12),
    execution_summary_fx_rate             DECIMAL(38,12),
    execution_summary_incentive_type      VARCHAR,
    trading_summary_total_fiat_executed              DECIMAL(38,12),
    trading_summary_total_fiat_in_flight             DECIMAL(38,12),
    trading_summary_total_fiat_non_deliverable       DECIMAL(38,12),
    trading_summary_total_fiat_remaining_deliverable DECIMAL(38,12),
    extra       JSON,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE liquidations IS 'Liquidations of received XRP into fiat (liquidation service GET /liquidations/{id}), one row per liquidation with its summaries flattened. Key: liquidation_id; a reload replaces the liquidation with its trades and executions.';
COMMENT ON COLUMN liquidations.liquidation_id IS 'Liquidation id (field id).';
COMMENT ON COLUMN liquidations.account_id IS 'Account of the liquidation.';
COMMENT ON COLUMN liquidations.created_at IS 'Creation time, UTC.';
COMMENT ON COLUMN liquidations.modified_at IS 'Last modification, UTC.';
COMMENT ON COLUMN liquidations.unique_reference_id IS 'Reference id of the liquidation.';
COMMENT ON COLUMN liquidations.network_payment_id IS 'Payment the liquidation belongs to (ripplenet_payment_id in the provider''s documents).';
COMMENT ON COLUMN liquidations.network_payment_created_at IS 'Creation time of that payment, UTC.';
COMMENT ON COLUMN liquidations.network_sender_address IS 'Sending account of the payment.';
COMMENT ON COLUMN liquidations.network_receiver_address IS 'Receiving account of the payment.';
COMMENT ON COLUMN liquidations.destination_amount IS 'Total available for withdrawal after all fees, in destination_currency.';
COMMENT ON COLUMN liquidations.destination_currency IS 'Fiat currency of destination_amount, upper case.';
COMMENT ON COLUMN liquidations.destination_venue IS 'Exchange where the liquidity asset is liquidated into fiat.';
COMMENT ON COLUMN liquidations.estimate_type IS 'Estimate type, for example firm.';
COMMENT ON COLUMN liquidations.expires_at IS 'Expiry of the liquidation, UTC.';
COMMENT ON COLUMN liquidations.liquidation_source IS 'Source of the liquidation.';
COMMENT ON COLUMN liquidations.status IS 'CREATED, QUEUED, STARTED, COMPLETED, PARTIALLY_COMPLETED or FAILED.';
COMMENT ON COLUMN liquidations.execution_strategy_max_amount_per_trade IS 'execution_strategy.maxAmountPerTrade: largest trade the liquidation is split into.';
COMMENT ON COLUMN liquidations.execution_strategy_minimum_trade_interval IS 'execution_strategy.minimumTradeInterval: least time between trades (unit not shown in the spec).';
COMMENT ON COLUMN liquidations.execution_summary_total_xrp IS 'execution_summary.total_xrp: XRP liquidated.';
COMMENT ON COLUMN liquidations.execution_summary_total_fiat IS 'execution_summary.total_fiat: total fiat available for withdrawal after fees.';
COMMENT ON COLUMN liquidations.execution_summary_total_slippage IS 'execution_summary.total_slippage.';
COMMENT ON COLUMN liquidations.execution_summary_total_sender_fees IS 'execution_summary.total_sender_fees.';
COMMENT ON COLUMN liquidations.execution_summary_total_receiver_fees IS 'execution_summary.total_receiver_fees.';
COMMENT ON COLUMN liquidations.execution_summary_total_trades IS 'execution_summary.total_trades: number of trades.';
COMMENT ON COLUMN liquidations.execution_summary_fx_rate IS 'execution_summary.fx_rate: fiat per XRP.';
COMMENT ON COLUMN liquidations.execution_summary_incentive_type IS 'execution_summary.incentive_type.';
COMMENT ON COLUMN liquidations.trading_summary_total_fiat_executed IS 'trading_summary.total_fiat_executed: fiat of executed trades.';
COMMENT ON COLUMN liquidations.trading_summary_total_fiat_in_flight IS 'trading_summary.total_fiat_in_flight: fiat of started, unfinished trades.';
COMMENT ON COLUMN liquidations.trading_summary_total_fiat_non_deliverable IS 'trading_summary.total_fiat_non_deliverable: fiat not confirmed delivered because of unknown trade failures.';
COMMENT ON COLUMN liquidations.trading_summary_total_fiat_remaining_deliverable IS 'trading_summary.total_fiat_remaining_deliverable.';
COMMENT ON COLUMN liquidations.extra IS 'Fields of the liquidation that recon does not know, as a JSON object (null when none).';
COMMENT ON COLUMN liquidations.source_file IS 'Provenance: raw file liquidations/<id>.json.';
COMMENT ON COLUMN liquidations.source_line IS 'Provenance: always 1 (the file is one liquidation).';
COMMENT ON COLUMN liquidations.run_id IS 'Provenance: run that loaded the liquidation (see source_files).';

CREATE TABLE liquidation_trades (
    liquidation_id       VARCHAR NOT NULL,
    trade_id             VARCHAR NOT NULL,
    created_at           TIMESTAMPTZ,
    modified_at          TIMESTAMPTZ,
    status               VARCHAR,
    amount               DECIMAL(38,12),
    destination_currency VARCHAR,
    trade_exchange       VARCHAR,
    expires_at           TIMESTAMPTZ,
    fiat_available_after_failure BOOLEAN,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE liquidation_trades IS 'Trade requests of a liquidation (trade_requests[] of GET /liquidations/{id}). Key: liquidation_id, trade_id.';
COMMENT ON COLUMN liquidation_trades.liquidation_id IS 'Liquidation the trade belongs to.';
COMMENT ON COLUMN liquidation_trades.trade_id IS 'Trade request id (field id).';
COMMENT ON COLUMN liquidation_trades.created_at IS 'Creation time, UTC.';
COMMENT ON COLUMN liquidation_trades.modified_at IS 'Last modification, UTC.';
COMMENT ON COLUMN liquidation_trades.status IS 'CREATED, QUEUED, STARTED, COMPLETED, PARTIALLY_COMPLETED or FAILED.';
COMMENT ON COLUMN liquidation_trades.amount IS 'Amount available for withdrawal after fees, in destination_currency.';
COMMENT ON COLUMN liquidation_trades.destination_currency IS 'Fiat currency of the trade, upper case.';
COMMENT ON COLUMN liquidation_trades.trade_exchange IS 'Exchange the trade runs on.';
COMMENT ON COLUMN liquidation_trades.expires_at IS 'Expiry of the trade, UTC.';
COMMENT ON COLUMN liquidation_trades.fiat_available_after_failure IS 'True when the funds of a failed trade became available in fiat.';
COMMENT ON COLUMN liquidation_trades.source_file IS 'Provenance: raw file liquidations/<id>.json.';
COMMENT ON COLUMN liquidation_trades.source_line IS 'Provenance: position in trade_requests, from 1.';
COMMENT ON COLUMN liquidation_trades.run_id IS 'Provenance: run that loaded the trade (see source_files).';

CREATE TABLE trade_executions (
    liquidation_id       VARCHAR NOT NULL,
    trade_id             VARCHAR NOT NULL,
    execution_id         VARCHAR NOT NULL,
    executed_at          TIMESTAMPTZ,
    status               VARCHAR,
    source_amount        DECIMAL(38,12),
    source_currency      VARCHAR,
    destination_amount   DECIMAL(38,12),
    destination_currency VARCHAR,
    rate                 DECIMAL(38,12),
    fee                  DECIMAL(38,12),
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE trade_executions IS 'Executions of a trade request (trade_requests[].trade_executions[] of GET /liquidations/{id}). Key: liquidation_id, trade_id, execution_id.';
COMMENT ON COLUMN trade_executions.liquidation_id IS 'Liquidation the execution belongs to.';
COMMENT ON COLUMN trade_executions.trade_id IS 'Trade request the execution belongs to.';
COMMENT ON COLUMN trade_executions.execution_id IS 'Execution id (field id).';
COMMENT ON COLUMN trade_executions.executed_at IS 'Execution time, UTC.';
COMMENT ON COLUMN trade_executions.status IS 'EXECUTED or FAILED.';
COMMENT ON COLUMN trade_executions.source_amount IS 'Amount sold, in source_currency.';
COMMENT ON COLUMN trade_executions.source_currency IS 'Currency sold (XRP), upper case.';
COMMENT ON COLUMN trade_executions.destination_amount IS 'Amount bought, in destination_currency.';
COMMENT ON COLUMN trade_executions.destination_currency IS 'Currency bought (fiat), upper case.';
COMMENT ON COLUMN trade_executions.rate IS 'Rate of the execution: destination units per source unit.';
COMMENT ON COLUMN trade_executions.fee IS 'Fee of the execution.';
COMMENT ON COLUMN trade_executions.source_file IS 'Provenance: raw file liquidations/<id>.json.';
COMMENT ON COLUMN trade_executions.source_line IS 'Provenance: position in the trade''s trade_executions, from 1.';
COMMENT ON COLUMN trade_executions.run_id IS 'Provenance: run that loaded the execution (see source_files).';

CREATE TABLE payments (
    payment_id          VARCHAR NOT NULL,
    payment_state       VARCHAR,
    payment_type        VARCHAR,
    end_to_end_id       VARCHAR,
    contract_hash       VARCHAR,
    created_at          TIMESTAMPTZ,
    expires_at          TIMESTAMPTZ,
    accepted_at         TIMESTAMPTZ,
    locked_at           TIMESTAMPTZ,
    executed_at         TIMESTAMPTZ,
    completed_at        TIMESTAMPTZ,
    returned_at         TIMESTAMPTZ,
    modified_at         TIMESTAMPTZ,
    connector_role      VARCHAR,
    internal_id         VARCHAR,
    labels              VARCHAR[],
    quote_id            VARCHAR,
    quote_type          VARCHAR,
    quote_amount        DECIMAL(38,12),
    quote_currency      VARCHAR,
    sender_address      VARCHAR,
    receiver_address    VARCHAR,
    payment_method      VARCHAR,
    returns_payment_with_id     VARCHAR,
    returned_by_payment_with_id VARCHAR,
    crypto_transaction_id       VARCHAR,
    liquidation_id              VARCHAR,
    liquidation_status          VARCHAR,
    liquidation_failure_reason  VARCHAR,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE payments IS 'Payments as the server API shows them now (GET /v4/payments by EXECUTED_AT window, content[] of Payment). Key: payment_id; a newer fetch replaces the row.';
COMMENT ON COLUMN payments.payment_id IS 'Payment id (network_payment_id in reports).';
COMMENT ON COLUMN payments.payment_state IS 'State when fetched: ACCEPTED, AWAITING_COLLECTION, COMPLETED, EXECUTED, FAILED, FORWARDED, LOCK_DECLINED, LOCKED, PREPARED, RETURNED or SETTLEMENT_DECLINED.';
COMMENT ON COLUMN payments.payment_type IS 'REGULAR or RETURN.';
COMMENT ON COLUMN payments.end_to_end_id IS 'contract.sender_end_to_end_id: sender-chosen id persisted on all instances.';
COMMENT ON COLUMN payments.contract_hash IS 'Hash of the contract values (fixed once LOCKED).';
COMMENT ON COLUMN payments.created_at IS 'contract.created_at, UTC.';
COMMENT ON COLUMN payments.expires_at IS 'contract.expires_at, UTC.';
COMMENT ON COLUMN payments.accepted_at IS 'Last time ACCEPTED, UTC.';
COMMENT ON COLUMN payments.locked_at IS 'Last time LOCKED, UTC.';
COMMENT ON COLUMN payments.executed_at IS 'Last time EXECUTED, UTC.';
COMMENT ON COLUMN payments.completed_at IS 'Last time COMPLETED, UTC.';
COMMENT ON COLUMN payments.returned_at IS 'Last time RETURNED, UTC.';
COMMENT ON COLUMN payments.modified_at IS 'Last modification, UTC.';
COMMENT ON COLUMN payments.connector_role IS 'internal_info.connector_role: SENDING, RECEIVING, INTERMEDIARY or INTERNAL.';
COMMENT ON COLUMN payments.internal_id IS 'internal_info.internal_id set by this node.';
COMMENT ON COLUMN payments.labels IS 'internal_info.labels[].label, for example OUTBOUND_TRANSFER_FAILED_RECOVERABLY; empty when none.';
COMMENT ON COLUMN payments.quote_id IS 'contract.quote.quote_id.';
COMMENT ON COLUMN payments.quote_type IS 'contract.quote.type: SENDER_AMOUNT, RECEIVER_AMOUNT, ... (says how quote_amount is meant).';
COMMENT ON COLUMN payments.quote_amount IS 'contract.quote.amount, in quote_currency.';
COMMENT ON COLUMN payments.quote_currency IS 'contract.quote.currency_code, upper case.';
COMMENT ON COLUMN payments.sender_address IS 'contract.quote.sender_address: sending account, account_name@network_address.';
COMMENT ON COLUMN payments.receiver_address IS 'contract.quote.receiver_address: receiving account.';
COMMENT ON COLUMN payments.payment_method IS 'contract.quote.payment_method.';
COMMENT ON COLUMN payments.returns_payment_with_id IS 'For a RETURN payment, the payment it returns.';
COMMENT ON COLUMN payments.returned_by_payment_with_id IS 'For a returned REGULAR payment, the RETURN payment.';
COMMENT ON COLUMN payments.crypto_transaction_id IS 'Id of the crypto transaction of the payment.';
COMMENT ON COLUMN payments.liquidation_id IS 'liquidation_details.id.';
COMMENT ON COLUMN payments.liquidation_status IS 'liquidation_details.status.';
COMMENT ON COLUMN payments.liquidation_failure_reason IS 'liquidation_details.failure_reason, for a failed liquidation.';
COMMENT ON COLUMN payments.source_file IS 'Provenance: raw page file payments/<from>_<to>_p<NNNN>.json.';
COMMENT ON COLUMN payments.source_line IS 'Provenance: element number in the page''s content, from 1.';
COMMENT ON COLUMN payments.run_id IS 'Provenance: run that loaded the payment (see source_files).';

CREATE TABLE transfers (
    transfer_id      VARCHAR NOT NULL,
    state            VARCHAR,
    owner_address    VARCHAR,
    sender_address   VARCHAR,
    receiver_address VARCHAR,
    amount           DECIMAL(38,12),
    sending_fee      DECIMAL(38,12),
    internal_id      VARCHAR,
    end_to_end_id    VARCHAR,
    created_at       TIMESTAMPTZ,
    labels           VARCHAR[],
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE transfers IS 'Transfers between accounts (server API GET /v4/transfers). Key: transfer_id; a newer fetch replaces the row.';
COMMENT ON COLUMN transfers.transfer_id IS 'Transfer id.';
COMMENT ON COLUMN transfers.state IS 'State when fetched (EXECUTED and COMPLETED occur; the spec lists no others).';
COMMENT ON COLUMN transfers.owner_address IS 'Account that owns the transfer.';
COMMENT ON COLUMN transfers.sender_address IS 'Sending account.';
COMMENT ON COLUMN transfers.receiver_address IS 'Receiving account.';
COMMENT ON COLUMN transfers.amount IS 'Amount moved (the spec gives no currency field: it is the accounts'' currency).';
COMMENT ON COLUMN transfers.sending_fee IS 'Fee charged to the sender, when any.';
COMMENT ON COLUMN transfers.internal_id IS 'Internal id set by this node.';
COMMENT ON COLUMN transfers.end_to_end_id IS 'End-to-end id of the transfer.';
COMMENT ON COLUMN transfers.created_at IS 'Creation time, UTC.';
COMMENT ON COLUMN transfers.labels IS 'Labels of the transfer; empty when none.';
COMMENT ON COLUMN transfers.source_file IS 'Provenance: raw page file transfers/p<NNNN>.json.';
COMMENT ON COLUMN transfers.source_line IS 'Provenance: element number in the page''s content, from 1.';
COMMENT ON COLUMN transfers.run_id IS 'Provenance: run that loaded the transfer (see source_files).';

CREATE TABLE balances (
    fetched_at       TIMESTAMPTZ NOT NULL,
    side             VARCHAR NOT NULL,
    institution      JSON,
    currency         VARCHAR,
    aggregate_balance DECIMAL(38,12),
    account_name     VARCHAR,
    account_currency VARCHAR,
    balance          DECIMAL(38,12),
    owner            VARCHAR,
    minimum_allowed_balance DECIMAL(38,12),
    extra       JSON,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE balances IS 'Balance snapshots (server API GET /v4/monitor/balances), one row per account balance; every snapshot is kept. Key: fetched_at; a reload of the same snapshot replaces it.';
COMMENT ON COLUMN balances.fetched_at IS 'Time of the snapshot: the response''s Date header, UTC.';
COMMENT ON COLUMN balances.side IS 'local (local_balance: this node''s accounts), remote (remote_balances[]) or error (errors[]: only extra is set).';
COMMENT ON COLUMN balances.institution IS 'Fields of the institution object other than currency_balances (its address and name), as JSON.';
COMMENT ON COLUMN balances.currency IS 'currency_balances[].currency, upper case.';
COMMENT ON COLUMN balances.aggregate_balance IS 'currency_balances[].aggregate_balance: sum over the institution''s accounts in that currency.';
COMMENT ON COLUMN balances.account_name IS 'account_balances[].account_name (null when the currency has no accounts listed).';
COMMENT ON COLUMN balances.account_currency IS 'account_balances[].currency, upper case.';
COMMENT ON COLUMN balances.balance IS 'account_balances[].balance.';
COMMENT ON COLUMN balances.owner IS 'account_balances[].owner.';
COMMENT ON COLUMN balances.minimum_allowed_balance IS 'account_balances[].minimum_allowed_balance.';
COMMENT ON COLUMN balances.extra IS 'Fields of the account balance that recon does not know (or the error object, for side error), as JSON.';
COMMENT ON COLUMN balances.source_file IS 'Provenance: raw file balances/balances.json.';
COMMENT ON COLUMN balances.source_line IS 'Provenance: position of the account balance in its account_balances array, from 1.';
COMMENT ON COLUMN balances.run_id IS 'Provenance: run that loaded the snapshot (see source_files).';

CREATE TABLE fees (
    fee_id          VARCHAR NOT NULL,
    value           DECIMAL(38,12),
    currency_code   VARCHAR,
    role_type       VARCHAR,
    payment_type    VARCHAR,
    node_type       VARCHAR,
    fee_type        VARCHAR,
    partner_name    VARCHAR,
    account_name    VARCHAR,
    upper_limit     DECIMAL(38,12),
    lower_limit     DECIMAL(38,12),
    payout_method   VARCHAR,
    fee_category    VARCHAR,
    fee_description VARCHAR,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE fees IS 'Fee configuration of this node (server API GET /v4/config/fees): the latest snapshot, replaced whole by each load. Key: fee_id.';
COMMENT ON COLUMN fees.fee_id IS 'feeId.';
COMMENT ON COLUMN fees.value IS 'PERCENTAGE: percent, above 0 and below 100. FLAT_RATE: amount in currency_code, may be negative.';
COMMENT ON COLUMN fees.currency_code IS 'Currency of the fee, upper case.';
COMMENT ON COLUMN fees.role_type IS 'SENDING, RECEIVING, INSTITUTION_SENDING or INSTITUTION_RECEIVING: who is charged.';
COMMENT ON COLUMN fees.payment_type IS 'REGULAR or RETURN.';
COMMENT ON COLUMN fees.node_type IS 'INITIAL, INTERMEDIATE or TERMINAL: position of the node in the chain.';
COMMENT ON COLUMN fees.fee_type IS 'PERCENTAGE or FLAT_RATE.';
COMMENT ON COLUMN fees.partner_name IS 'Owner of the account, as a node address.';
COMMENT ON COLUMN fees.account_name IS 'Account the fee applies to.';
COMMENT ON COLUMN fees.upper_limit IS 'Upper bound of the slab, for a slab-based fee.';
COMMENT ON COLUMN fees.lower_limit IS 'Lower bound of the slab, for a slab-based fee.';
COMMENT ON COLUMN fees.payout_method IS 'Payout method the fee applies to.';
COMMENT ON COLUMN fees.fee_category IS 'NONE, OVERSEAS_DELIVERY_CHARGES, BENEFICIARY_BANK_CHARGE, PROCESSING_HANDLING_CHARGE, LOCAL_GOVERNMENT_CHARGE or OTHER.';
COMMENT ON COLUMN fees.fee_description IS 'Free text.';
COMMENT ON COLUMN fees.source_file IS 'Provenance: raw page file fees/p<NNNN>.json.';
COMMENT ON COLUMN fees.source_line IS 'Provenance: element number in the page''s content, from 1.';
COMMENT ON COLUMN fees.run_id IS 'Provenance: run that loaded the fee (see source_files).';

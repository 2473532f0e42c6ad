-- Initial schema: reports and statements loaded from the network, the quarantine, the run
-- ledger and breaks. Amounts are DECIMAL(38,12) (fiat 2 decimals, XRP 6, rates 8+), times
-- TIMESTAMPTZ in UTC, currency codes upper case. Every source row keeps its provenance.

COMMENT ON TABLE schema_version IS 'Migrations applied to this file (sql/migrations/NNNN_name.sql), one row each.';
COMMENT ON COLUMN schema_version.version IS 'NNNN of the migration file.';
COMMENT ON COLUMN schema_version.name IS 'File name without .sql.';
COMMENT ON COLUMN schema_version.applied_at IS 'When the migration was applied, UTC.';

CREATE TABLE report_files (
    report_id     VARCHAR NOT NULL,
    report_type   VARCHAR NOT NULL,
    report_format VARCHAR NOT NULL,
    status        VARCHAR NOT NULL,
    window_from   DATE NOT NULL,
    window_to     DATE NOT NULL,
    source_file   VARCHAR,
    sha256        VARCHAR,
    size_bytes    BIGINT,
    rows_loaded   BIGINT NOT NULL,
    rows_quarantined BIGINT NOT NULL,
    run_id        VARCHAR NOT NULL,
    PRIMARY KEY (report_id)
);
COMMENT ON TABLE report_files IS 'One row per report downloaded from the reporting service (GET /v1/reports/download/{id}), with its window, status and checksum.';
COMMENT ON COLUMN report_files.report_id IS 'reportId of the reporting service.';
COMMENT ON COLUMN report_files.report_type IS 'PAYMENT_OPS, RECON or FAILURE_CONVERSION_SSA.';
COMMENT ON COLUMN report_files.report_format IS 'CSV or JSON.';
COMMENT ON COLUMN report_files.status IS 'READY (downloaded), EMPTY (no transactions in range) or FAILED (not generated; the run is incomplete).';
COMMENT ON COLUMN report_files.window_from IS 'First UTC day the report covers (startDate).';
COMMENT ON COLUMN report_files.window_to IS 'Last UTC day the report covers (endDate, inclusive).';
COMMENT ON COLUMN report_files.source_file IS 'Path of the raw file inside the run''s archived inputs.';
COMMENT ON COLUMN report_files.sha256 IS 'SHA-256 of the raw file, hex.';
COMMENT ON COLUMN report_files.size_bytes IS 'Size of the raw file in bytes.';
COMMENT ON COLUMN report_files.rows_loaded IS 'Rows loaded into the report''s table.';
COMMENT ON COLUMN report_files.rows_quarantined IS 'Rows moved to quarantine instead.';
COMMENT ON COLUMN report_files.run_id IS 'Run that loaded the file.';

CREATE TABLE payment_ops (
    end_to_end_id        VARCHAR,
    network_payment_id   VARCHAR NOT NULL,
    quote_ts             TIMESTAMPTZ,
    created_at           TIMESTAMPTZ,
    executed_at          TIMESTAMPTZ,
    sender_address       VARCHAR,
    sender_customer      VARCHAR,
    sent_amount          DECIMAL(38,12),
    sent_currency        VARCHAR,
    withdrawal_result_amount DECIMAL(38,12),
    receiver_address     VARCHAR,
    receiver_customer    VARCHAR,
    received_amount      DECIMAL(38,12),
    received_currency    VARCHAR,
    fx_spot_rate         DECIMAL(38,12),
    source_exchange      VARCHAR,
    destination_exchange VARCHAR,
    payment_method       VARCHAR,
    payment_state        VARCHAR,
    remitter_name        VARCHAR,
    remitter_account     VARCHAR,
    beneficiary_name     VARCHAR,
    beneficiary_account  VARCHAR,
    payment_batch_id     VARCHAR,
    extra                JSON,
    report_id            VARCHAR NOT NULL,
    source_file          VARCHAR NOT NULL,
    source_line          BIGINT NOT NULL
);
COMMENT ON TABLE payment_ops IS 'PAYMENT_OPS report rows: one row per payment (reporting service). Key: network_payment_id.';
COMMENT ON COLUMN payment_ops.end_to_end_id IS 'Sender-chosen id persisted on all participating instances.';
COMMENT ON COLUMN payment_ops.network_payment_id IS 'Unique payment id (ripplenet_payment_id in the provider''s documents).';
COMMENT ON COLUMN payment_ops.quote_ts IS 'Quote time, UTC. Reports select payments by this time.';
COMMENT ON COLUMN payment_ops.created_at IS 'Transaction creation time, UTC.';
COMMENT ON COLUMN payment_ops.executed_at IS 'Settlement time, UTC.';
COMMENT ON COLUMN payment_ops.sender_address IS 'Sending account, account_name@network_address.';
COMMENT ON COLUMN payment_ops.sender_customer IS 'Sending institution name.';
COMMENT ON COLUMN payment_ops.sent_amount IS 'Amount sent, in sent_currency.';
COMMENT ON COLUMN payment_ops.sent_currency IS 'ISO 4217 code of sent_amount, upper case.';
COMMENT ON COLUMN payment_ops.withdrawal_result_amount IS 'Sender only: liquidity asset withdrawn from the source exchange wallet after fees and incentives.';
COMMENT ON COLUMN payment_ops.receiver_address IS 'Receiving account, account_name@network_address.';
COMMENT ON COLUMN payment_ops.receiver_customer IS 'Receiving institution name.';
COMMENT ON COLUMN payment_ops.received_amount IS 'Amount received, in received_currency.';
COMMENT ON COLUMN payment_ops.received_currency IS 'ISO 4217 code of received_amount, upper case.';
COMMENT ON COLUMN payment_ops.fx_spot_rate IS 'Sender only: third-party spot rate (received per sent unit).';
COMMENT ON COLUMN payment_ops.source_exchange IS 'Sender only: source digital exchange.';
COMMENT ON COLUMN payment_ops.destination_exchange IS 'Receiver only: destination digital exchange.';
COMMENT ON COLUMN payment_ops.payment_method IS 'Sender only: payout method, free text.';
COMMENT ON COLUMN payment_ops.payment_state IS 'Payment state when the report was generated (COMPLETED, EXECUTED, FAILED, ...).';
COMMENT ON COLUMN payment_ops.remitter_name IS 'Personal data: remitter name. Never logged.';
COMMENT ON COLUMN payment_ops.remitter_account IS 'Personal data: remitter account. Never logged.';
COMMENT ON COLUMN payment_ops.beneficiary_name IS 'Personal data: beneficiary name. Never logged.';
COMMENT ON COLUMN payment_ops.beneficiary_account IS 'Personal data: beneficiary account. Never logged.';
COMMENT ON COLUMN payment_ops.payment_batch_id IS 'Batch id, only for payments in a batch.';
COMMENT ON COLUMN payment_ops.extra IS 'Columns of the file that recon does not know, as a JSON object (null when none).';
COMMENT ON COLUMN payment_ops.report_id IS 'Provenance: reportId the row came from.';
COMMENT ON COLUMN payment_ops.source_file IS 'Provenance: raw file path inside the run''s archived inputs.';
COMMENT ON COLUMN payment_ops.source_line IS 'Provenance: line of the record in the raw file (header is line 1); JSON: element number, from 1.';

CREATE TABLE recon_transactions (
    end_to_end_id            VARCHAR,
    network_payment_id       VARCHAR NOT NULL,
    payment_state            VARCHAR,
    internal_payment_state   VARCHAR,
    quote_ts                 TIMESTAMPTZ,
    executed_at              TIMESTAMPTZ,
    sender_address           VARCHAR,
    sender_customer          VARCHAR,
    sent_amount              DECIMAL(38,12),
    sent_currency            VARCHAR,
    receiver_address         VARCHAR,
    receiver_customer        VARCHAR,
    received_amount          DECIMAL(38,12),
    received_currency        VARCHAR,
    fx_spot_rate             DECIMAL(38,12),
    source_exchange          VARCHAR,
    destination_exchange     VARCHAR,
    payment_method           VARCHAR,
    transaction_id           VARCHAR,
    transaction_type         VARCHAR,
    transaction_state        VARCHAR,
    venue_id                 VARCHAR,
    source_result_amount     DECIMAL(38,12),
    source_result_adjusted_amount DECIMAL(38,12),
    source_result_proceeds   DECIMAL(38,12),
    source_result_adjusted_proceeds DECIMAL(38,12),
    withdrawal_result_id     VARCHAR,
    withdrawal_result_details_transaction_id VARCHAR,
    withdrawal_result_amount DECIMAL(38,12),
    withdrawal_result_fee_amount DECIMAL(38,12),
    withdrawal_result_incentive_value DECIMAL(38,12),
    deposit_result_id        VARCHAR,
    deposit_result_amount    DECIMAL(38,12),
    deposit_result_fee_amount DECIMAL(38,12),
    balance_change_currency  VARCHAR,
    balance_change           DECIMAL(38,12),
    balance_result           DECIMAL(38,12),
    destination_result_id    VARCHAR,
    destination_result_amount DECIMAL(38,12),
    destination_result_adjusted_amount DECIMAL(38,12),
    destination_result_incentive_value DECIMAL(38,12),
    destination_result_proceeds DECIMAL(38,12),
    destination_result_adjusted_proceeds DECIMAL(38,12),
    liquidation_status       VARCHAR,
    liquidation_trade_request_status VARCHAR,
    payment_batch_id         VARCHAR,
    extra                    JSON,
    report_id                VARCHAR NOT NULL,
    source_file              VARCHAR NOT NULL,
    source_line              BIGINT NOT NULL
);
COMMENT ON TABLE recon_transactions IS 'RECON report rows: one row per transaction of a payment (reporting service). Key: network_payment_id, transaction_id.';
COMMENT ON COLUMN recon_transactions.end_to_end_id IS 'Sender-chosen id persisted on all participating instances.';
COMMENT ON COLUMN recon_transactions.network_payment_id IS 'Payment id, shared by every transaction row of the payment.';
COMMENT ON COLUMN recon_transactions.payment_state IS 'Payment state when the report was generated.';
COMMENT ON COLUMN recon_transactions.internal_payment_state IS 'Provider-internal payment state.';
COMMENT ON COLUMN recon_transactions.quote_ts IS 'Quote time, UTC. Reports select payments by this time.';
COMMENT ON COLUMN recon_transactions.executed_at IS 'Settlement time, UTC.';
COMMENT ON COLUMN recon_transactions.sender_address IS 'Sending account, account_name@network_address.';
COMMENT ON COLUMN recon_transactions.sender_customer IS 'Sending institution name.';
COMMENT ON COLUMN recon_transactions.sent_amount IS 'Payment amount sent, in sent_currency (repeated on every row).';
COMMENT ON COLUMN recon_transactions.sent_currency IS 'ISO 4217 code of sent_amount, upper case.';
COMMENT ON COLUMN recon_transactions.receiver_address IS 'Receiving account, account_name@network_address.';
COMMENT ON COLUMN recon_transactions.receiver_customer IS 'Receiving institution name.';
COMMENT ON COLUMN recon_transactions.received_amount IS 'Payment amount received, in received_currency (repeated on every row).';
COMMENT ON COLUMN recon_transactions.received_currency IS 'ISO 4217 code of received_amount, upper case.';
COMMENT ON COLUMN recon_transactions.fx_spot_rate IS 'Third-party spot rate (received per sent unit).';
COMMENT ON COLUMN recon_transactions.source_exchange IS 'Source digital exchange.';
COMMENT ON COLUMN recon_transactions.destination_exchange IS 'Destination digital exchange.';
COMMENT ON COLUMN recon_transactions.payment_method IS 'Payout method, free text.';
COMMENT ON COLUMN recon_transactions.transaction_id IS 'Id of this transaction within the payment.';
COMMENT ON COLUMN recon_transactions.transaction_type IS 'CRYPTO_TRANSFER, FIAT_TRANSFER or TRADE.';
COMMENT ON COLUMN recon_transactions.transaction_state IS 'COMPLETED, COMPLETE, EXECUTED or FAILED.';
COMMENT ON COLUMN recon_transactions.venue_id IS 'Exchange-side id of the transaction.';
COMMENT ON COLUMN recon_transactions.source_result_amount IS 'Source trade: amount in.';
COMMENT ON COLUMN recon_transactions.source_result_adjusted_amount IS 'Source trade: amount in after adjustments.';
COMMENT ON COLUMN recon_transactions.source_result_proceeds IS 'Source trade: proceeds (liquidity asset).';
COMMENT ON COLUMN recon_transactions.source_result_adjusted_proceeds IS 'Source trade: proceeds after adjustments.';
COMMENT ON COLUMN recon_transactions.withdrawal_result_id IS 'Withdrawal from the source exchange: id.';
COMMENT ON COLUMN recon_transactions.withdrawal_result_details_transaction_id IS 'Withdrawal: ledger transaction id.';
COMMENT ON COLUMN recon_transactions.withdrawal_result_amount IS 'Withdrawal: amount of the liquidity asset.';
COMMENT ON COLUMN recon_transactions.withdrawal_result_fee_amount IS 'Withdrawal: fee.';
COMMENT ON COLUMN recon_transactions.withdrawal_result_incentive_value IS 'Withdrawal: incentive value.';
COMMENT ON COLUMN recon_transactions.deposit_result_id IS 'Deposit at the destination exchange: id.';
COMMENT ON COLUMN recon_transactions.deposit_result_amount IS 'Deposit: amount.';
COMMENT ON COLUMN recon_transactions.deposit_result_fee_amount IS 'Deposit: fee.';
COMMENT ON COLUMN recon_transactions.balance_change_currency IS 'Currency of balance_change, upper case.';
COMMENT ON COLUMN recon_transactions.balance_change IS 'Change of the account balance by this transaction.';
COMMENT ON COLUMN recon_transactions.balance_result IS 'Account balance after this transaction.';
COMMENT ON COLUMN recon_transactions.destination_result_id IS 'Destination trade: id.';
COMMENT ON COLUMN recon_transactions.destination_result_amount IS 'Destination trade: amount in (liquidity asset).';
COMMENT ON COLUMN recon_transactions.destination_result_adjusted_amount IS 'Destination trade: amount in after adjustments.';
COMMENT ON COLUMN recon_transactions.destination_result_incentive_value IS 'Destination trade: incentive value.';
COMMENT ON COLUMN recon_transactions.destination_result_proceeds IS 'Destination trade: fiat proceeds.';
COMMENT ON COLUMN recon_transactions.destination_result_adjusted_proceeds IS 'Destination trade: fiat proceeds after adjustments; compared with the liquidation''s destination_amount.';
COMMENT ON COLUMN recon_transactions.liquidation_status IS 'Status of the liquidation of the payment.';
COMMENT ON COLUMN recon_transactions.liquidation_trade_request_status IS 'Status of the liquidation trade request.';
COMMENT ON COLUMN recon_transactions.payment_batch_id IS 'Batch id, only for payments in a batch.';
COMMENT ON COLUMN recon_transactions.extra IS 'Columns of the file that recon does not know, as a JSON object (null when none).';
COMMENT ON COLUMN recon_transactions.report_id IS 'Provenance: reportId the row came from.';
COMMENT ON COLUMN recon_transactions.source_file IS 'Provenance: raw file path inside the run''s archived inputs.';
COMMENT ON COLUMN recon_transactions.source_line IS 'Provenance: line of the record in the raw file (header is line 1); JSON: element number, from 1.';

CREATE TABLE failure_conversions (
    end_to_end_id          VARCHAR,
    network_payment_id     VARCHAR NOT NULL,
    execution_result_type  VARCHAR,
    execution_timestamp    TIMESTAMPTZ,
    fiat_adjusted_value    DECIMAL(38,12),
    fx_rate                DECIMAL(38,12),
    intermediary_delta     DECIMAL(38,12),
    payment_state          VARCHAR,
    sent_amount            DECIMAL(38,12),
    sent_currency          VARCHAR,
    received_amount        DECIMAL(38,12),
    received_currency      VARCHAR,
    transfer_currency      VARCHAR,
    venue_id               VARCHAR,
    ssa_account            VARCHAR,
    sender_customer        VARCHAR,
    ssa_remote_transfer_id VARCHAR,
    ssa_transfer_amount    DECIMAL(38,12),
    ssa_balance_change     DECIMAL(38,12),
    ssa_balance_result     DECIMAL(38,12),
    ssa_transfer_currency  VARCHAR,
    ssa_transfer_state     VARCHAR,
    extra                  JSON,
    report_id              VARCHAR NOT NULL,
    source_file            VARCHAR NOT NULL,
    source_line            BIGINT NOT NULL
);
COMMENT ON TABLE failure_conversions IS 'FAILURE_CONVERSION_SSA report rows: failed payments and the transfer that recovered their funds to the sender settlement account. Key: network_payment_id, ssa_remote_transfer_id.';
COMMENT ON COLUMN failure_conversions.end_to_end_id IS 'Sender-chosen id persisted on all participating instances.';
COMMENT ON COLUMN failure_conversions.network_payment_id IS 'Id of the failed payment.';
COMMENT ON COLUMN failure_conversions.execution_result_type IS 'Type of the execution result that failed (TRANSFER, EXCHANGE, EXCHANGE_TRADE, CRYPTO_TRANSFER).';
COMMENT ON COLUMN failure_conversions.execution_timestamp IS 'Time of the failed execution, UTC. Reports select rows by this time.';
COMMENT ON COLUMN failure_conversions.fiat_adjusted_value IS 'Delta between quoted and received amounts.';
COMMENT ON COLUMN failure_conversions.fx_rate IS 'FX rate applied.';
COMMENT ON COLUMN failure_conversions.intermediary_delta IS 'Liquidity asset difference between quote-time and execution-time FX rate (to be deprecated).';
COMMENT ON COLUMN failure_conversions.payment_state IS 'Payment state when the report was generated.';
COMMENT ON COLUMN failure_conversions.sent_amount IS 'Amount sent, in sent_currency.';
COMMENT ON COLUMN failure_conversions.sent_currency IS 'ISO 4217 code of sent_amount, upper case.';
COMMENT ON COLUMN failure_conversions.received_amount IS 'Amount received, in received_currency.';
COMMENT ON COLUMN failure_conversions.received_currency IS 'ISO 4217 code of received_amount, upper case.';
COMMENT ON COLUMN failure_conversions.transfer_currency IS 'Currency of the failed transfer, upper case.';
COMMENT ON COLUMN failure_conversions.venue_id IS 'Exchange-side id.';
COMMENT ON COLUMN failure_conversions.ssa_account IS 'Sender settlement account that receives the recovered funds.';
COMMENT ON COLUMN failure_conversions.sender_customer IS 'Sending institution name.';
COMMENT ON COLUMN failure_conversions.ssa_remote_transfer_id IS 'Id of the recovery transfer to the settlement account.';
COMMENT ON COLUMN failure_conversions.ssa_transfer_amount IS 'Amount of the recovery transfer.';
COMMENT ON COLUMN failure_conversions.ssa_balance_change IS 'Change of the settlement account balance.';
COMMENT ON COLUMN failure_conversions.ssa_balance_result IS 'Settlement account balance after the transfer.';
COMMENT ON COLUMN failure_conversions.ssa_transfer_currency IS 'Currency of the recovery transfer, upper case.';
COMMENT ON COLUMN failure_conversions.ssa_transfer_state IS 'State of the recovery transfer; anything but COMPLETED or EXECUTED means funds not yet recovered.';
COMMENT ON COLUMN failure_conversions.extra IS 'Columns of the file that recon does not know, as a JSON object (null when none).';
COMMENT ON COLUMN failure_conversions.report_id IS 'Provenance: reportId the row came from.';
COMMENT ON COLUMN failure_conversions.source_file IS 'Provenance: raw file path inside the run''s archived inputs.';
COMMENT ON COLUMN failure_conversions.source_line IS 'Provenance: line of the record in the raw file (header is line 1); JSON: element number, from 1.';

CREATE TABLE statements (
    account         VARCHAR NOT NULL,
    account_name    VARCHAR,
    currency        VARCHAR,
    opening_balance DECIMAL(38,12),
    closing_balance DECIMAL(38,12),
    start_datetime  TIMESTAMPTZ NOT NULL,
    end_datetime    TIMESTAMPTZ NOT NULL,
    generated_at    TIMESTAMPTZ,
    entries         BIGINT NOT NULL,
    source_file     VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL,
    PRIMARY KEY (account, start_datetime, end_datetime)
);
COMMENT ON TABLE statements IS 'Ledger statement headers per account and requested window (server API GET /statement/{account}).';
COMMENT ON COLUMN statements.account IS 'Account address, account_name@network_address, as requested.';
COMMENT ON COLUMN statements.account_name IS 'account_name returned by the server API.';
COMMENT ON COLUMN statements.currency IS 'Currency of the account, upper case.';
COMMENT ON COLUMN statements.opening_balance IS 'Balance at start_datetime.';
COMMENT ON COLUMN statements.closing_balance IS 'Balance at end_datetime.';
COMMENT ON COLUMN statements.start_datetime IS 'Window start, inclusive, UTC.';
COMMENT ON COLUMN statements.end_datetime IS 'Window end, exclusive, UTC.';
COMMENT ON COLUMN statements.generated_at IS 'When the server generated the statement.';
COMMENT ON COLUMN statements.entries IS 'Number of entries (transactions.total_elements).';
COMMENT ON COLUMN statements.source_file IS 'Provenance: raw file of the first page.';
COMMENT ON COLUMN statements.run_id IS 'Provenance: run that loaded the statement (see source_files for the request and sha256).';

CREATE TABLE statement_entries (
    account            VARCHAR NOT NULL,
    transaction_id     VARCHAR NOT NULL,
    transaction_type   VARCHAR,
    transaction_state  VARCHAR,
    balance_change     DECIMAL(38,12),
    balance_result     DECIMAL(38,12),
    created_at         TIMESTAMPTZ,
    end_to_end_id      VARCHAR,
    internal_id        VARCHAR,
    venue_id           VARCHAR,
    transaction_hash   VARCHAR,
    returns_payment_with_id     VARCHAR,
    returned_by_payment_with_id VARCHAR,
    sender_address     VARCHAR,
    receiver_address   VARCHAR,
    source_file        VARCHAR NOT NULL,
    source_line        BIGINT NOT NULL,
    run_id             VARCHAR NOT NULL
);
COMMENT ON TABLE statement_entries IS 'Ledger statement entries of this node''s accounts (server API). Key: account, transaction_id.';
COMMENT ON COLUMN statement_entries.account IS 'Account address the statement was requested for.';
COMMENT ON COLUMN statement_entries.transaction_id IS 'For PAYMENT entries, the payment id (network_payment_id).';
COMMENT ON COLUMN statement_entries.transaction_type IS 'PAYMENT, TRANSFER or EXCHANGE_TRANSFER.';
COMMENT ON COLUMN statement_entries.transaction_state IS 'State of the transaction.';
COMMENT ON COLUMN statement_entries.balance_change IS 'Signed change of the account balance, in the account currency.';
COMMENT ON COLUMN statement_entries.balance_result IS 'Account balance after the entry.';
COMMENT ON COLUMN statement_entries.created_at IS 'Time of the entry, UTC. Statements select entries by this time.';
COMMENT ON COLUMN statement_entries.end_to_end_id IS 'End-to-end id of the payment.';
COMMENT ON COLUMN statement_entries.internal_id IS 'Internal id set by this node.';
COMMENT ON COLUMN statement_entries.venue_id IS 'Exchange-side id.';
COMMENT ON COLUMN statement_entries.transaction_hash IS 'Ledger transfer identifier.';
COMMENT ON COLUMN statement_entries.returns_payment_with_id IS 'For a return, the payment it returns.';
COMMENT ON COLUMN statement_entries.returned_by_payment_with_id IS 'For a returned payment, the return payment.';
COMMENT ON COLUMN statement_entries.sender_address IS 'Sending account of the transaction.';
COMMENT ON COLUMN statement_entries.receiver_address IS 'Receiving account of the transaction.';
COMMENT ON COLUMN statement_entries.source_file IS 'Provenance: raw statement page file.';
COMMENT ON COLUMN statement_entries.source_line IS 'Provenance: element number in the page''s transactions.content, from 1.';
COMMENT ON COLUMN statement_entries.run_id IS 'Provenance: run that loaded the entry (see source_files for the request and sha256).';

CREATE TABLE quarantine (
    source      VARCHAR NOT NULL,
    account     VARCHAR,
    window_from DATE,
    window_to   DATE,
    record_key  VARCHAR,
    source_file VARCHAR NOT NULL,
    report_id   VARCHAR,
    line        BIGINT NOT NULL,
    path        VARCHAR,
    reason      VARCHAR NOT NULL,
    raw         VARCHAR,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE quarantine IS 'Malformed source rows kept aside instead of loaded (bad decimal or timestamp, wrong column count, unknown enum value, missing key), with where they were and why. Reloading a slice replaces its quarantine rows.';
COMMENT ON COLUMN quarantine.source IS 'Source of the row: payment_ops, recon, failure_conversion, statement, liquidation, payment, transfer, balance or fee.';
COMMENT ON COLUMN quarantine.account IS 'Account of the statement, for statement rows.';
COMMENT ON COLUMN quarantine.window_from IS 'First day of the slice (report, statement or page window) the row came with; null for sources keyed by id.';
COMMENT ON COLUMN quarantine.window_to IS 'Last day of that slice; reloading a slice that covers it replaces its quarantine rows.';
COMMENT ON COLUMN quarantine.record_key IS 'Key of the record when it could be read: liquidation id, payment_id, transfer_id, feeId, or the balances snapshot time.';
COMMENT ON COLUMN quarantine.source_file IS 'Raw file the row came from, inside the run''s archived inputs.';
COMMENT ON COLUMN quarantine.report_id IS 'reportId, for report rows.';
COMMENT ON COLUMN quarantine.line IS 'CSV: line of the record in the file (header is line 1). JSON: element number in its array, from 1 (1 for a file that is one object).';
COMMENT ON COLUMN quarantine.path IS 'JSON only: path of the element in the file, for example $[4] or $.trade_requests[0].trade_executions[1].';
COMMENT ON COLUMN quarantine.reason IS 'Why the row was not loaded; several reasons are joined by "; ".';
COMMENT ON COLUMN quarantine.raw IS 'The row as received: the CSV record''s text or the JSON element.';
COMMENT ON COLUMN quarantine.run_id IS 'Run that quarantined the row.';

CREATE TABLE runs (
    run_id       VARCHAR PRIMARY KEY,
    window_from  DATE NOT NULL,
    window_to    DATE NOT NULL,
    as_of        TIMESTAMPTZ NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL,
    finished_at  TIMESTAMPTZ,
    verdict      VARCHAR NOT NULL,
    reasons      VARCHAR[],
    breaks_open  BIGINT,
    archive_url  VARCHAR,
    tool_version VARCHAR
);
COMMENT ON TABLE runs IS 'Run ledger: one row per published run.';
COMMENT ON COLUMN runs.run_id IS 'r-<UTC start time>, also the archive folder name.';
COMMENT ON COLUMN runs.window_from IS 'First UTC day reconciled.';
COMMENT ON COLUMN runs.window_to IS 'Last UTC day reconciled (inclusive).';
COMMENT ON COLUMN runs.as_of IS 'Time the rules judged grace periods and ageing against.';
COMMENT ON COLUMN runs.started_at IS 'Wall-clock start of the run.';
COMMENT ON COLUMN runs.finished_at IS 'Wall-clock end of the run.';
COMMENT ON COLUMN runs.verdict IS 'complete, or incomplete when a source failed (a FAILED report, an archive error): an incomplete run never means "no breaks".';
COMMENT ON COLUMN runs.reasons IS 'Why the run is incomplete.';
COMMENT ON COLUMN runs.breaks_open IS 'Open breaks in the window after the run.';
COMMENT ON COLUMN runs.archive_url IS 'Where the run''s break reports were archived.';
COMMENT ON COLUMN runs.tool_version IS 'recon version that made the run.';

CREATE TABLE run_stages (
    run_id      VARCHAR NOT NULL,
    stage       VARCHAR NOT NULL,
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ NOT NULL,
    rows        BIGINT,
    PRIMARY KEY (run_id, stage)
);
COMMENT ON TABLE run_stages IS 'Stages of each published run with their timing.';
COMMENT ON COLUMN run_stages.run_id IS 'Run the stage belongs to.';
COMMENT ON COLUMN run_stages.stage IS 'extract, load, rules or report.';
COMMENT ON COLUMN run_stages.started_at IS 'Stage start, UTC.';
COMMENT ON COLUMN run_stages.finished_at IS 'Stage end, UTC.';
COMMENT ON COLUMN run_stages.rows IS 'Rows handled by the stage (files, rows loaded, breaks found, files written).';

CREATE TABLE breaks (
    break_id       VARCHAR PRIMARY KEY,
    rule_id        VARCHAR NOT NULL,
    severity       VARCHAR NOT NULL,
    status         VARCHAR NOT NULL,
    break_key      VARCHAR NOT NULL,
    event_date     DATE NOT NULL,
    payment_id     VARCHAR,
    end_to_end_id  VARCHAR,
    account        VARCHAR,
    currency       VARCHAR,
    expected       DECIMAL(38,12),
    actual         DECIMAL(38,12),
    difference     DECIMAL(38,12),
    detail         VARCHAR,
    left_source    VARCHAR,
    right_source   VARCHAR,
    first_seen_run VARCHAR NOT NULL,
    first_seen_at  TIMESTAMPTZ NOT NULL,
    last_seen_run  VARCHAR NOT NULL,
    resolved_run   VARCHAR,
    age_days       INTEGER NOT NULL
);
COMMENT ON TABLE breaks IS 'Reconciliation breaks: one row per break, kept across runs (new, persisting, resolved).';
COMMENT ON COLUMN breaks.break_id IS 'Stable id: first 16 hex digits of sha256(rule_id || '':'' || break_key); the same break has the same id in every run.';
COMMENT ON COLUMN breaks.rule_id IS 'Rule that found the break (file rules/<rule_id>.sql).';
COMMENT ON COLUMN breaks.severity IS 'P1 (most urgent) .. P4.';
COMMENT ON COLUMN breaks.status IS 'new (first seen by the last run covering it), persisting (seen before and again), resolved (no longer found by a run covering its day).';
COMMENT ON COLUMN breaks.break_key IS 'What the rule keys the break on (a payment id, payment id and account, ...).';
COMMENT ON COLUMN breaks.event_date IS 'UTC day the break belongs to; a run resolves only breaks of days inside its window.';
COMMENT ON COLUMN breaks.payment_id IS 'Payment id (network_payment_id), when the break is about a payment.';
COMMENT ON COLUMN breaks.end_to_end_id IS 'End-to-end id of the payment.';
COMMENT ON COLUMN breaks.account IS 'Account address concerned, when one.';
COMMENT ON COLUMN breaks.currency IS 'Currency of expected and actual, upper case.';
COMMENT ON COLUMN breaks.expected IS 'Amount one side says (the reference side of the rule).';
COMMENT ON COLUMN breaks.actual IS 'Amount the other side says (null when missing).';
COMMENT ON COLUMN breaks.difference IS 'actual - expected, or the missing amount.';
COMMENT ON COLUMN breaks.detail IS 'Human explanation of the break.';
COMMENT ON COLUMN breaks.left_source IS 'Provenance of the reference side (report id and line, statement file, ...).';
COMMENT ON COLUMN breaks.right_source IS 'Provenance of the other side, when it exists.';
COMMENT ON COLUMN breaks.first_seen_run IS 'Run that first found the break.';
COMMENT ON COLUMN breaks.first_seen_at IS 'as_of of that run.';
COMMENT ON COLUMN breaks.last_seen_run IS 'Last run that found the break.';
COMMENT ON COLUMN breaks.resolved_run IS 'Run that no longer found it (status resolved).';
COMMENT ON COLUMN breaks.age_days IS 'Whole days from first_seen_at to the as_of of the last run that covered it.';

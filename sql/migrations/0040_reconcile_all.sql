-- Everything recon pulls, loaded for the rules (issue 13): the fee totals,
-- execution results, quote elements and user_info steps of server API
-- payments; the fields recon does not know, kept as JSON on payments,
-- transfers, trades and executions; payment_trace with fees, returns and
-- trades.

ALTER TABLE payments ADD COLUMN fee_nodes JSON;
ALTER TABLE payments ADD COLUMN extra JSON;
COMMENT ON COLUMN payments.fee_nodes IS 'contract.fee_info.nodes as received: one array of fee items per participating node, keyed by node name (the item shape is not shown in the spec).';
COMMENT ON COLUMN payments.extra IS 'Fields of the payment that no column or child table holds (network_info, validator, contract.quote.price_guarantee, liquidation_details.failure_count, any unknown field), by path, as a JSON object; null when none.';
ALTER TABLE transfers ADD COLUMN extra JSON;
COMMENT ON COLUMN transfers.extra IS 'Fields of the transfer that recon does not know (user_info, and any field the provider adds), as a JSON object; null when none.';
ALTER TABLE liquidation_trades ADD COLUMN extra JSON;
COMMENT ON COLUMN liquidation_trades.extra IS 'Fields of the trade request that recon does not know, as a JSON object; null when none.';
ALTER TABLE trade_executions ADD COLUMN extra JSON;
COMMENT ON COLUMN trade_executions.extra IS 'Fields of the trade execution that recon does not know, as a JSON object; null when none.';

CREATE TABLE payment_fees (
    payment_id   VARCHAR NOT NULL,
    fee_currency VARCHAR,
    total_fee    DECIMAL(38,12),
    source_file  VARCHAR NOT NULL,
    source_line  BIGINT NOT NULL,
    run_id       VARCHAR NOT NULL
);
COMMENT ON TABLE payment_fees IS 'Total fees of a server API payment, one row per currency (contract.fee_info.total_fees[]). Replaced with its payment.';
COMMENT ON COLUMN payment_fees.payment_id IS 'Payment id (payments.payment_id).';
COMMENT ON COLUMN payment_fees.fee_currency IS 'fee_currency, upper case.';
COMMENT ON COLUMN payment_fees.total_fee IS 'total_fee: all fees of the payment in that currency, over every node.';
COMMENT ON COLUMN payment_fees.source_file IS 'Provenance: the payments page file of the payment.';
COMMENT ON COLUMN payment_fees.source_line IS 'Provenance: element number of the payment in the page''s content, from 1.';
COMMENT ON COLUMN payment_fees.run_id IS 'Provenance: run that loaded the payment.';

CREATE TABLE payment_execution_results (
    payment_id              VARCHAR NOT NULL,
    result_list             VARCHAR,
    execution_result_id     VARCHAR NOT NULL,
    execution_timestamp     TIMESTAMPTZ,
    execution_result_type   VARCHAR,
    execution_result_order  INTEGER,
    sender_address          VARCHAR,
    receiver_address        VARCHAR,
    sending_amount          DECIMAL(38,12),
    receiving_amount        DECIMAL(38,12),
    sending_fee             DECIMAL(38,12),
    receiving_fee           DECIMAL(38,12),
    sending_currency_code   VARCHAR,
    receiving_currency_code VARCHAR,
    transfer_currency_code  VARCHAR,
    fx_rate                 DECIMAL(38,12),
    fx_base_currency        VARCHAR,
    fx_counter_currency     VARCHAR,
    fx_type                 VARCHAR,
    intermediary_delta      DECIMAL(38,12),
    incentive_type          VARCHAR,
    incentive_value         DECIMAL(38,12),
    transaction_hash        VARCHAR,
    venue_id                VARCHAR,
    fiat_adjusted_value     DECIMAL(38,12),
    liquidity_payment_id    VARCHAR,
    extra                   JSON,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE payment_execution_results IS 'Movements of funds of a server API payment, one row per execution result (execution_results[], liquidation_execution_results[], push_forward_execution_results[]). Replaced with its payment.';
COMMENT ON COLUMN payment_execution_results.payment_id IS 'Payment id (payments.payment_id).';
COMMENT ON COLUMN payment_execution_results.result_list IS 'execution (execution_results), liquidation (liquidation_execution_results: liquidating a wallet-receive payment) or push_forward (push_forward_execution_results: after a failure at an intermediary transfer or destination exchange).';
COMMENT ON COLUMN payment_execution_results.execution_result_id IS 'execution_result_id.';
COMMENT ON COLUMN payment_execution_results.execution_timestamp IS 'execution_timestamp, UTC.';
COMMENT ON COLUMN payment_execution_results.execution_result_type IS 'TRANSFER, EXCHANGE, EXCHANGE_TRADE or CRYPTO_TRANSFER.';
COMMENT ON COLUMN payment_execution_results.execution_result_order IS 'execution_result_order: order in which the actions were taken.';
COMMENT ON COLUMN payment_execution_results.sender_address IS 'Sending account of the movement.';
COMMENT ON COLUMN payment_execution_results.receiver_address IS 'Receiving account of the movement.';
COMMENT ON COLUMN payment_execution_results.sending_amount IS 'Amount sent, in the sending (or transfer) currency.';
COMMENT ON COLUMN payment_execution_results.receiving_amount IS 'Amount received, in the receiving (or transfer) currency.';
COMMENT ON COLUMN payment_execution_results.sending_fee IS 'Fee charged by the sender''s node on this movement (for fee_mismatch: this node''s fee when it holds sender_address).';
COMMENT ON COLUMN payment_execution_results.receiving_fee IS 'Fee charged by the receiver''s node on this movement.';
COMMENT ON COLUMN payment_execution_results.sending_currency_code IS 'EXCHANGE results: currency sent, upper case.';
COMMENT ON COLUMN payment_execution_results.receiving_currency_code IS 'EXCHANGE results: currency received, upper case.';
COMMENT ON COLUMN payment_execution_results.transfer_currency_code IS 'TRANSFER results: currency moved, upper case.';
COMMENT ON COLUMN payment_execution_results.fx_rate IS 'fx_rate.rate (or fx_rate when a plain number).';
COMMENT ON COLUMN payment_execution_results.fx_base_currency IS 'fx_rate.base_currency_code.';
COMMENT ON COLUMN payment_execution_results.fx_counter_currency IS 'fx_rate.counter_currency_code.';
COMMENT ON COLUMN payment_execution_results.fx_type IS 'fx_rate.type: buy or sell.';
COMMENT ON COLUMN payment_execution_results.intermediary_delta IS 'Liquidity asset taken from (positive) or returned to (negative) the incentive pool; to be deprecated.';
COMMENT ON COLUMN payment_execution_results.incentive_type IS 'firm or fx.';
COMMENT ON COLUMN payment_execution_results.incentive_value IS 'Incentive, same sign convention as intermediary_delta.';
COMMENT ON COLUMN payment_execution_results.transaction_hash IS 'Ledger transfer identifier.';
COMMENT ON COLUMN payment_execution_results.venue_id IS 'Exchange-side id.';
COMMENT ON COLUMN payment_execution_results.fiat_adjusted_value IS 'Exchange trades: quoted minus received amount.';
COMMENT ON COLUMN payment_execution_results.liquidity_payment_id IS 'Liquidity payment holding the transaction.';
COMMENT ON COLUMN payment_execution_results.extra IS 'Fields of the execution result that recon does not know, as a JSON object; null when none.';
COMMENT ON COLUMN payment_execution_results.source_file IS 'Provenance: the payments page file of the payment.';
COMMENT ON COLUMN payment_execution_results.source_line IS 'Provenance: element number of the payment in the page''s content, from 1.';
COMMENT ON COLUMN payment_execution_results.run_id IS 'Provenance: run that loaded the payment.';

CREATE TABLE payment_quote_elements (
    payment_id              VARCHAR NOT NULL,
    quote_element_id        VARCHAR NOT NULL,
    quote_element_type      VARCHAR,
    quote_element_order     INTEGER,
    sender_address          VARCHAR,
    receiver_address        VARCHAR,
    sending_amount          DECIMAL(38,12),
    receiving_amount        DECIMAL(38,12),
    sending_fee             DECIMAL(38,12),
    receiving_fee           DECIMAL(38,12),
    sending_currency_code   VARCHAR,
    receiving_currency_code VARCHAR,
    transfer_currency_code  VARCHAR,
    fx_rate                 DECIMAL(38,12),
    fx_base_currency        VARCHAR,
    fx_counter_currency     VARCHAR,
    fx_type                 VARCHAR,
    extra                   JSON,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE payment_quote_elements IS 'The liquidity path quoted for a server API payment, one row per contract.quote.quote_elements[] item. Replaced with its payment.';
COMMENT ON COLUMN payment_quote_elements.payment_id IS 'Payment id (payments.payment_id).';
COMMENT ON COLUMN payment_quote_elements.quote_element_id IS 'quote_element_id.';
COMMENT ON COLUMN payment_quote_elements.quote_element_type IS 'TRANSFER, EXCHANGE, EXCHANGE_TRADE or CRYPTO_TRANSFER.';
COMMENT ON COLUMN payment_quote_elements.quote_element_order IS 'Order along the liquidity path.';
COMMENT ON COLUMN payment_quote_elements.sender_address IS 'Sending account.';
COMMENT ON COLUMN payment_quote_elements.receiver_address IS 'Receiving account.';
COMMENT ON COLUMN payment_quote_elements.sending_amount IS 'Amount quoted to send.';
COMMENT ON COLUMN payment_quote_elements.receiving_amount IS 'Amount quoted to receive.';
COMMENT ON COLUMN payment_quote_elements.sending_fee IS 'Fee quoted for the sender''s node (0 for EXCHANGE).';
COMMENT ON COLUMN payment_quote_elements.receiving_fee IS 'Fee quoted for the receiver''s node (0 for EXCHANGE).';
COMMENT ON COLUMN payment_quote_elements.sending_currency_code IS 'EXCHANGE elements: currency sent, upper case.';
COMMENT ON COLUMN payment_quote_elements.receiving_currency_code IS 'EXCHANGE elements: currency received, upper case.';
COMMENT ON COLUMN payment_quote_elements.transfer_currency_code IS 'TRANSFER elements: currency moved, upper case.';
COMMENT ON COLUMN payment_quote_elements.fx_rate IS 'fx_rate.rate (or fx_rate when a plain number).';
COMMENT ON COLUMN payment_quote_elements.fx_base_currency IS 'fx_rate.base_currency_code.';
COMMENT ON COLUMN payment_quote_elements.fx_counter_currency IS 'fx_rate.counter_currency_code.';
COMMENT ON COLUMN payment_quote_elements.fx_type IS 'fx_rate.type: buy or sell.';
COMMENT ON COLUMN payment_quote_elements.extra IS 'Fields of the quote element that recon does not know, as a JSON object; null when none.';
COMMENT ON COLUMN payment_quote_elements.source_file IS 'Provenance: the payments page file of the payment.';
COMMENT ON COLUMN payment_quote_elements.source_line IS 'Provenance: element number of the payment in the page''s content, from 1.';
COMMENT ON COLUMN payment_quote_elements.run_id IS 'Provenance: run that loaded the payment.';

CREATE TABLE payment_user_info (
    payment_id   VARCHAR NOT NULL,
    node_address VARCHAR,
    step         VARCHAR NOT NULL,
    position     INTEGER,
    created_at   TIMESTAMPTZ,
    sub_state    VARCHAR,
    json         JSON,
    source_file  VARCHAR NOT NULL,
    source_line  BIGINT NOT NULL,
    run_id       VARCHAR NOT NULL
);
COMMENT ON TABLE payment_user_info IS 'Lifecycle steps of a server API payment as each node recorded them (user_info[].<step>[]), one row per item. Replaced with its payment.';
COMMENT ON COLUMN payment_user_info.payment_id IS 'Payment id (payments.payment_id).';
COMMENT ON COLUMN payment_user_info.node_address IS 'Node that recorded the step.';
COMMENT ON COLUMN payment_user_info.step IS 'accepted, locked, lock_declined, retry_accept, retry_settlement, settlement, settlement_declined, failed, executed, completed, forwarded or returned.';
COMMENT ON COLUMN payment_user_info.position IS 'Order of the item within the payment''s user_info, from 1.';
COMMENT ON COLUMN payment_user_info.created_at IS 'When the step was recorded, UTC.';
COMMENT ON COLUMN payment_user_info.sub_state IS 'subState: finer payment state, when given.';
COMMENT ON COLUMN payment_user_info.json IS 'The item''s json object: executed items hold the sub_state as key and the memo as value; returned items the return reasons.';
COMMENT ON COLUMN payment_user_info.source_file IS 'Provenance: the payments page file of the payment.';
COMMENT ON COLUMN payment_user_info.source_line IS 'Provenance: element number of the payment in the page''s content, from 1.';
COMMENT ON COLUMN payment_user_info.run_id IS 'Provenance: run that loaded the payment.';

-- payment_trace gains fees, returns and liquidation trades (replaces 0004's view; its comments again).
DROP VIEW payment_trace;
CREATE VIEW payment_trace AS
WITH ids AS (
    SELECT network_payment_id AS payment_id FROM payment_ops
    UNION SELECT network_payment_id FROM recon_transactions
    UNION SELECT network_payment_id FROM failure_conversions
    UNION SELECT transaction_id FROM statement_entries WHERE transaction_type = 'PAYMENT'
    UNION SELECT network_payment_id FROM liquidations WHERE network_payment_id IS NOT NULL
    UNION SELECT payment_id FROM payments
), ops AS (
    SELECT network_payment_id AS payment_id, count(*) AS ops_rows,
           first(end_to_end_id ORDER BY report_id, source_line) AS end_to_end_id,
           first(payment_state ORDER BY report_id, source_line) AS ops_state,
           first(sent_amount ORDER BY report_id, source_line) AS ops_sent_amount,
           first(sent_currency ORDER BY report_id, source_line) AS ops_sent_currency,
           first(received_amount ORDER BY report_id, source_line) AS ops_received_amount,
           first(received_currency ORDER BY report_id, source_line) AS ops_received_currency,
           first(quote_ts ORDER BY report_id, source_line) AS ops_quote_ts,
           first(executed_at ORDER BY report_id, source_line) AS ops_executed_at,
           first(report_id ORDER BY report_id, source_line) AS ops_report_id
    FROM payment_ops GROUP BY network_payment_id
), recon AS (
    SELECT network_payment_id AS payment_id, count(*) AS recon_rows,
           first(end_to_end_id ORDER BY report_id, source_line) AS end_to_end_id,
           first(payment_state ORDER BY report_id, source_line) AS recon_state,
           first(sent_amount ORDER BY report_id, source_line) AS recon_sent_amount,
           first(received_amount ORDER BY report_id, source_line) AS recon_received_amount,
           list(DISTINCT transaction_type || ':' || transaction_state ORDER BY transaction_type || ':' || transaction_state) AS recon_transactions,
           count(*) FILTER (WHERE transaction_state = 'FAILED') AS recon_failed_transactions,
           sum(destination_result_adjusted_proceeds) AS recon_adjusted_proceeds,
           first(report_id ORDER BY report_id, source_line) AS recon_report_id
    FROM recon_transactions GROUP BY network_payment_id
), stmt AS (
    SELECT transaction_id AS payment_id, count(*) AS statement_entries,
           first(end_to_end_id ORDER BY account, created_at) AS end_to_end_id,
           list({'account': account, 'balance_change': balance_change, 'state': transaction_state, 'created_at': created_at}
                ORDER BY account, created_at) AS statement_changes
    FROM statement_entries WHERE transaction_type = 'PAYMENT' GROUP BY transaction_id
), liq AS (
    SELECT network_payment_id AS payment_id, count(*) AS liquidations,
           first(liquidation_id ORDER BY created_at, liquidation_id) AS liquidation_id,
           first(status ORDER BY created_at, liquidation_id) AS liquidation_status,
           sum(destination_amount) AS liquidation_destination_amount,
           first(destination_currency ORDER BY created_at, liquidation_id) AS liquidation_currency,
           sum(trading_summary_total_fiat_executed) AS liquidation_fiat_executed,
           sum(trading_summary_total_fiat_non_deliverable) AS liquidation_fiat_non_deliverable
    FROM liquidations WHERE network_payment_id IS NOT NULL GROUP BY network_payment_id
), api AS (
    SELECT payment_id, count(*) AS api_rows,
           first(end_to_end_id ORDER BY modified_at DESC) AS end_to_end_id,
           first(payment_state ORDER BY modified_at DESC) AS api_state,
           first(payment_type ORDER BY modified_at DESC) AS api_payment_type,
           first(connector_role ORDER BY modified_at DESC) AS api_connector_role,
           first(labels ORDER BY modified_at DESC) AS api_labels,
           first(quote_amount ORDER BY modified_at DESC) AS api_quote_amount,
           first(quote_currency ORDER BY modified_at DESC) AS api_quote_currency,
           first(executed_at ORDER BY modified_at DESC) AS api_executed_at,
           first(modified_at ORDER BY modified_at DESC) AS api_modified_at,
           first(returned_at ORDER BY modified_at DESC) AS api_returned_at,
           first(returns_payment_with_id ORDER BY modified_at DESC) AS api_returns_payment_with_id,
           first(returned_by_payment_with_id ORDER BY modified_at DESC) AS api_returned_by_payment_with_id
    FROM payments GROUP BY payment_id
), fee AS (
    SELECT payment_id, list({'currency': fee_currency, 'total_fee': total_fee} ORDER BY fee_currency) AS api_total_fees
    FROM payment_fees GROUP BY payment_id
), exe AS (
    SELECT payment_id, count(*) AS api_execution_results,
           sum(coalesce(sending_fee, 0) + coalesce(receiving_fee, 0))
               FILTER (WHERE result_list = 'execution' AND execution_result_type = 'TRANSFER') AS api_transfer_fees
    FROM payment_execution_results GROUP BY payment_id
), trd AS (
    SELECT l.network_payment_id AS payment_id, count(*) AS liquidation_trades,
           sum(t.amount) AS liquidation_trades_amount,
           count(*) FILTER (WHERE t.status = 'FAILED') AS liquidation_failed_trades
    FROM liquidation_trades t JOIN liquidations l USING (liquidation_id)
    WHERE l.network_payment_id IS NOT NULL GROUP BY l.network_payment_id
), fail AS (
    SELECT network_payment_id AS payment_id, count(*) AS failure_rows,
           first(end_to_end_id ORDER BY report_id, source_line) AS end_to_end_id,
           first(ssa_transfer_state ORDER BY report_id, source_line) AS failure_ssa_transfer_state,
           sum(ssa_transfer_amount) AS failure_ssa_transfer_amount,
           first(ssa_transfer_currency ORDER BY report_id, source_line) AS failure_ssa_transfer_currency
    FROM failure_conversions GROUP BY network_payment_id
), brk AS (
    SELECT payment_id, count(*) AS open_breaks, list(DISTINCT rule_id ORDER BY rule_id) AS open_break_rules
    FROM breaks WHERE status <> 'resolved' AND payment_id IS NOT NULL GROUP BY payment_id
)
SELECT ids.payment_id,
       coalesce(ops.end_to_end_id, recon.end_to_end_id, api.end_to_end_id, stmt.end_to_end_id, fail.end_to_end_id) AS end_to_end_id,
       concat_ws(',',
           CASE WHEN ops.payment_id IS NOT NULL THEN 'payment_ops' END,
           CASE WHEN recon.payment_id IS NOT NULL THEN 'recon' END,
           CASE WHEN stmt.payment_id IS NOT NULL THEN 'statement' END,
           CASE WHEN liq.payment_id IS NOT NULL THEN 'liquidation' END,
           CASE WHEN api.payment_id IS NOT NULL THEN 'payment' END,
           CASE WHEN fail.payment_id IS NOT NULL THEN 'failure_conversion' END) AS seen_in,
       coalesce(ops.ops_rows, 0) AS ops_rows, ops.ops_state, ops.ops_sent_amount, ops.ops_sent_currency,
       ops.ops_received_amount, ops.ops_received_currency, ops.ops_quote_ts, ops.ops_executed_at, ops.ops_report_id,
       coalesce(recon.recon_rows, 0) AS recon_rows, recon.recon_state, recon.recon_sent_amount,
       recon.recon_received_amount, recon.recon_transactions, coalesce(recon.recon_failed_transactions, 0) AS recon_failed_transactions,
       recon.recon_adjusted_proceeds, recon.recon_report_id,
       coalesce(stmt.statement_entries, 0) AS statement_entries, stmt.statement_changes,
       coalesce(liq.liquidations, 0) AS liquidations, liq.liquidation_id, liq.liquidation_status,
       liq.liquidation_destination_amount, liq.liquidation_currency, liq.liquidation_fiat_executed,
       liq.liquidation_fiat_non_deliverable,
       api.api_state, api.api_payment_type, api.api_connector_role, api.api_labels, api.api_quote_amount,
       api.api_quote_currency, api.api_executed_at, api.api_modified_at, api.api_returned_at,
       api.api_returns_payment_with_id, api.api_returned_by_payment_with_id, fee.api_total_fees,
       coalesce(exe.api_execution_results, 0) AS api_execution_results, exe.api_transfer_fees,
       coalesce(trd.liquidation_trades, 0) AS liquidation_trades, trd.liquidation_trades_amount,
       coalesce(trd.liquidation_failed_trades, 0) AS liquidation_failed_trades,
       coalesce(fail.failure_rows, 0) AS failure_rows, fail.failure_ssa_transfer_state,
       fail.failure_ssa_transfer_amount, fail.failure_ssa_transfer_currency,
       coalesce(brk.open_breaks, 0) AS open_breaks, brk.open_break_rules
FROM ids
LEFT JOIN ops USING (payment_id)
LEFT JOIN recon USING (payment_id)
LEFT JOIN stmt USING (payment_id)
LEFT JOIN liq USING (payment_id)
LEFT JOIN api USING (payment_id)
LEFT JOIN fail USING (payment_id)
LEFT JOIN fee USING (payment_id)
LEFT JOIN exe USING (payment_id)
LEFT JOIN trd USING (payment_id)
LEFT JOIN brk USING (payment_id);
COMMENT ON VIEW payment_trace IS 'One row per payment known to any source, with what each source says about it: PAYMENT_OPS (ops_*), RECON transactions aggregated (recon_*), statement entries (statement_*), liquidations (liquidation_*), the server API''s current state (api_*), FAILURE_CONVERSION_SSA (failure_*), its fees, returns and liquidation trades, and its open breaks.';
COMMENT ON COLUMN payment_trace.payment_id IS 'Payment id (network_payment_id; transaction_id of PAYMENT statement entries; payment_id of the server API).';
COMMENT ON COLUMN payment_trace.end_to_end_id IS 'End-to-end id, from the first source that has it.';
COMMENT ON COLUMN payment_trace.seen_in IS 'Sources that know the payment, comma-separated: payment_ops, recon, statement, liquidation, payment (server API), failure_conversion.';
COMMENT ON COLUMN payment_trace.ops_rows IS 'PAYMENT_OPS rows of the payment (1 expected).';
COMMENT ON COLUMN payment_trace.ops_state IS 'PAYMENT_OPS payment_state.';
COMMENT ON COLUMN payment_trace.ops_sent_amount IS 'PAYMENT_OPS sent_amount, in ops_sent_currency.';
COMMENT ON COLUMN payment_trace.ops_sent_currency IS 'PAYMENT_OPS sent_currency.';
COMMENT ON COLUMN payment_trace.ops_received_amount IS 'PAYMENT_OPS received_amount, in ops_received_currency.';
COMMENT ON COLUMN payment_trace.ops_received_currency IS 'PAYMENT_OPS received_currency.';
COMMENT ON COLUMN payment_trace.ops_quote_ts IS 'PAYMENT_OPS quote_ts.';
COMMENT ON COLUMN payment_trace.ops_executed_at IS 'PAYMENT_OPS executed_at.';
COMMENT ON COLUMN payment_trace.ops_report_id IS 'Report the PAYMENT_OPS row came from.';
COMMENT ON COLUMN payment_trace.recon_rows IS 'RECON rows (transactions) of the payment.';
COMMENT ON COLUMN payment_trace.recon_state IS 'RECON payment_state.';
COMMENT ON COLUMN payment_trace.recon_sent_amount IS 'RECON sent_amount.';
COMMENT ON COLUMN payment_trace.recon_received_amount IS 'RECON received_amount.';
COMMENT ON COLUMN payment_trace.recon_transactions IS 'Distinct transaction_type:transaction_state pairs of the RECON rows.';
COMMENT ON COLUMN payment_trace.recon_failed_transactions IS 'RECON rows with transaction_state FAILED.';
COMMENT ON COLUMN payment_trace.recon_adjusted_proceeds IS 'Sum of destination_result_adjusted_proceeds over the RECON rows (what a liquidation should deliver).';
COMMENT ON COLUMN payment_trace.recon_report_id IS 'Report the RECON rows came from.';
COMMENT ON COLUMN payment_trace.statement_entries IS 'PAYMENT statement entries of the payment on this node''s accounts.';
COMMENT ON COLUMN payment_trace.statement_changes IS 'Those entries: account, balance_change (in the account''s currency), state, created_at.';
COMMENT ON COLUMN payment_trace.liquidations IS 'Liquidations of the payment.';
COMMENT ON COLUMN payment_trace.liquidation_id IS 'First liquidation of the payment.';
COMMENT ON COLUMN payment_trace.liquidation_status IS 'Its status.';
COMMENT ON COLUMN payment_trace.liquidation_destination_amount IS 'Sum of destination_amount over the payment''s liquidations.';
COMMENT ON COLUMN payment_trace.liquidation_currency IS 'destination_currency of the first liquidation.';
COMMENT ON COLUMN payment_trace.liquidation_fiat_executed IS 'Sum of trading_summary_total_fiat_executed.';
COMMENT ON COLUMN payment_trace.liquidation_fiat_non_deliverable IS 'Sum of trading_summary_total_fiat_non_deliverable.';
COMMENT ON COLUMN payment_trace.api_state IS 'Server API payment_state (latest fetch).';
COMMENT ON COLUMN payment_trace.api_payment_type IS 'Server API payment_type: REGULAR or RETURN.';
COMMENT ON COLUMN payment_trace.api_connector_role IS 'Role of this node in the payment: SENDING, RECEIVING, INTERMEDIARY or INTERNAL.';
COMMENT ON COLUMN payment_trace.api_labels IS 'Server API labels.';
COMMENT ON COLUMN payment_trace.api_quote_amount IS 'Server API contract.quote.amount.';
COMMENT ON COLUMN payment_trace.api_quote_currency IS 'Server API contract.quote.currency_code.';
COMMENT ON COLUMN payment_trace.api_executed_at IS 'Server API executed_at.';
COMMENT ON COLUMN payment_trace.api_modified_at IS 'Server API modified_at.';
COMMENT ON COLUMN payment_trace.failure_rows IS 'FAILURE_CONVERSION_SSA rows of the payment.';
COMMENT ON COLUMN payment_trace.failure_ssa_transfer_state IS 'State of the recovery transfer to the settlement account.';
COMMENT ON COLUMN payment_trace.failure_ssa_transfer_amount IS 'Sum of ssa_transfer_amount.';
COMMENT ON COLUMN payment_trace.failure_ssa_transfer_currency IS 'ssa_transfer_currency.';
COMMENT ON COLUMN payment_trace.open_breaks IS 'Open breaks about the payment.';
COMMENT ON COLUMN payment_trace.open_break_rules IS 'Rules of those breaks.';
COMMENT ON COLUMN payment_trace.api_returned_at IS 'Server API returned_at: when the payment was last RETURNED.';
COMMENT ON COLUMN payment_trace.api_returns_payment_with_id IS 'For a RETURN payment, the payment it returns.';
COMMENT ON COLUMN payment_trace.api_returned_by_payment_with_id IS 'For a returned payment, its RETURN payment.';
COMMENT ON COLUMN payment_trace.api_total_fees IS 'contract.fee_info.total_fees: list of {currency, total_fee}.';
COMMENT ON COLUMN payment_trace.api_execution_results IS 'Execution results of the payment (all lists).';
COMMENT ON COLUMN payment_trace.api_transfer_fees IS 'Sum of sending_fee + receiving_fee over the TRANSFER execution results: the fees every node charged (mixed currencies add up: compare per currency in payment_execution_results).';
COMMENT ON COLUMN payment_trace.liquidation_trades IS 'Trade requests of the payment''s liquidations.';
COMMENT ON COLUMN payment_trace.liquidation_trades_amount IS 'Sum of their amount (fiat available after fees); compare with liquidation_destination_amount.';
COMMENT ON COLUMN payment_trace.liquidation_failed_trades IS 'Trade requests with status FAILED.';

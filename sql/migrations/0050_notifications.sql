-- Webhook notifications (issue 15, DESIGN §10): one row per msg_id the
-- receiver spooled, with its deliveries summed over the runs that read them
-- and the full notification the server API gave for it.
CREATE TABLE notifications (
    msg_id                        VARCHAR NOT NULL,
    received_count                BIGINT NOT NULL,
    first_received_at             TIMESTAMPTZ,
    last_received_at              TIMESTAMPTZ,
    fetch_status                  VARCHAR NOT NULL,
    fetch_error                   VARCHAR,
    notification_type             VARCHAR,
    notification_version          VARCHAR,
    notification_status           VARCHAR,
    created_at                    TIMESTAMPTZ,
    modified_at                   TIMESTAMPTZ,
    sender_end_to_end_id          VARCHAR,
    payment_id                    VARCHAR,
    payment_status                VARCHAR,
    previous_payment_status       VARCHAR,
    connector_role                VARCHAR,
    payment_type                  VARCHAR,
    payout_method                 VARCHAR,
    original_sender_end_to_end_id VARCHAR,
    output                        JSON,
    source_file                   VARCHAR,
    receipts_file                 VARCHAR NOT NULL,
    request                       VARCHAR,
    run_id                        VARCHAR NOT NULL
);
COMMENT ON TABLE notifications IS 'Webhook notifications: one row per msg_id the receiver (recon webhook serve) spooled, with the full notification of GET /orchestration/payment/notification/{msg_id}. Key: msg_id; each run adds the deliveries it read from the spool and fetches the ids not fetched before.';
COMMENT ON COLUMN notifications.msg_id IS 'Message id (uuid, lower case) of the delivery {msg_id}; equals the notification''s uuid.';
COMMENT ON COLUMN notifications.received_count IS 'Deliveries of the msg_id received so far, duplicates included, summed over the runs that read them.';
COMMENT ON COLUMN notifications.first_received_at IS 'First delivery received (receiver clock, UTC); null for an id only retried.';
COMMENT ON COLUMN notifications.last_received_at IS 'Last delivery received (receiver clock, UTC).';
COMMENT ON COLUMN notifications.fetch_status IS 'FETCHED (the full notification is loaded), NOT_FOUND (the server API answered 404) or FAILED (any other failure after the run''s retries, or an answer that is not a notification); NOT_FOUND and FAILED are fetched again by the next run.';
COMMENT ON COLUMN notifications.fetch_error IS 'Why the fetch failed (the API error or the problem with the answer); null when FETCHED.';
COMMENT ON COLUMN notifications.notification_type IS 'notification_type, for example PAYMENT_SUCCESS (other values: not shown).';
COMMENT ON COLUMN notifications.notification_version IS 'notification_version, for example 1.0.';
COMMENT ON COLUMN notifications.notification_status IS 'notification_status, for example NEW (other values: not shown).';
COMMENT ON COLUMN notifications.created_at IS 'Notification created_at, UTC: when the server API made it (orders a payment''s notifications; receipt order may differ).';
COMMENT ON COLUMN notifications.modified_at IS 'Notification modified_at, UTC.';
COMMENT ON COLUMN notifications.sender_end_to_end_id IS 'notification_payload.sender_end_to_end_id.';
COMMENT ON COLUMN notifications.payment_id IS 'notification_payload.payment_id: the payment (payments.payment_id).';
COMMENT ON COLUMN notifications.payment_status IS 'notification_payload.payment_status: the state the payment changed to.';
COMMENT ON COLUMN notifications.previous_payment_status IS 'notification_payload.previous_payment_status: the state it changed from.';
COMMENT ON COLUMN notifications.connector_role IS 'notification_payload.connector_role: this node''s role in the payment.';
COMMENT ON COLUMN notifications.payment_type IS 'notification_payload.payment_type.';
COMMENT ON COLUMN notifications.payout_method IS 'notification_payload.payout_method (nullable).';
COMMENT ON COLUMN notifications.original_sender_end_to_end_id IS 'notification_payload.original_sender_end_to_end_id (nullable).';
COMMENT ON COLUMN notifications.output IS 'notification_payload.output as received (JSON; its shape is not shown).';
COMMENT ON COLUMN notifications.source_file IS 'Raw file of the full notification (notifications/<msg_id>.json); null when not fetched.';
COMMENT ON COLUMN notifications.receipts_file IS 'Raw file of the run''s spool read that last counted or fetched the id (notifications/receipts_<from>_<next>.json: offsets, receipt times, fetch outcomes).';
COMMENT ON COLUMN notifications.request IS 'The GET that fetched (or failed to fetch) the notification.';
COMMENT ON COLUMN notifications.run_id IS 'Run that last changed the row.';

-- payment_trace gains the notifications of each payment.
CREATE OR REPLACE VIEW payment_trace AS
WITH ids AS (
    SELECT network_payment_id AS payment_id FROM payment_ops
    UNION SELECT network_payment_id FROM recon_transactions
    UNION SELECT network_payment_id FROM failure_conversions
    UNION SELECT transaction_id FROM statement_entries WHERE transaction_type = 'PAYMENT'
    UNION SELECT network_payment_id FROM liquidations WHERE network_payment_id IS NOT NULL
    UNION SELECT payment_id FROM payments
    UNION SELECT payment_id FROM notifications WHERE fetch_status = 'FETCHED' AND payment_id IS NOT NULL
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
), ntf AS (
    SELECT payment_id, count(*) AS notifications, sum(received_count) AS notification_deliveries,
           first(payment_status ORDER BY created_at DESC, msg_id DESC) AS notification_status,
           max(created_at) AS notification_at
    FROM notifications WHERE fetch_status = 'FETCHED' AND payment_id IS NOT NULL GROUP BY payment_id
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
           CASE WHEN fail.payment_id IS NOT NULL THEN 'failure_conversion' END,
           CASE WHEN ntf.payment_id IS NOT NULL THEN 'notification' END) AS seen_in,
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
       coalesce(ntf.notifications, 0) AS notifications, coalesce(ntf.notification_deliveries, 0) AS notification_deliveries,
       ntf.notification_status, ntf.notification_at,
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
LEFT JOIN ntf USING (payment_id)
LEFT JOIN brk USING (payment_id);
COMMENT ON VIEW payment_trace IS 'One row per payment known to any source, with what each source says about it: PAYMENT_OPS (ops_*), RECON transactions aggregated (recon_*), statement entries (statement_*), liquidations (liquidation_*), the server API''s current state (api_*), FAILURE_CONVERSION_SSA (failure_*), its fees, returns and liquidation trades, webhook notifications (notification*), and its open breaks.';
COMMENT ON COLUMN payment_trace.payment_id IS 'Payment id (network_payment_id; transaction_id of PAYMENT statement entries; payment_id of the server API).';
COMMENT ON COLUMN payment_trace.end_to_end_id IS 'End-to-end id, from the first source that has it.';
COMMENT ON COLUMN payment_trace.seen_in IS 'Sources that know the payment, comma-separated: payment_ops, recon, statement, liquidation, payment (server API), failure_conversion, notification (a fetched webhook notification).';
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
COMMENT ON COLUMN payment_trace.notifications IS 'Fetched webhook notifications of the payment (distinct msg_ids).';
COMMENT ON COLUMN payment_trace.notification_deliveries IS 'Deliveries of those notifications, duplicates included.';
COMMENT ON COLUMN payment_trace.notification_status IS 'payment_status of the latest notification (by its created_at).';
COMMENT ON COLUMN payment_trace.notification_at IS 'created_at of the latest notification.';

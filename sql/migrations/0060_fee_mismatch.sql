-- fee_mismatch (issue 13): the fee configuration's history, so a payment is
-- judged by the configuration in force when it executed; the fee this node's
-- configuration gives each TRANSFER leg (payment_fee_legs); payment_trace
-- gains the expected and charged fee.

CREATE TABLE fee_history (
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
    valid_from      TIMESTAMPTZ NOT NULL,
    valid_to        TIMESTAMPTZ,
    source_file VARCHAR NOT NULL,
    source_line BIGINT NOT NULL,
    run_id      VARCHAR NOT NULL
);
COMMENT ON TABLE fee_history IS 'Every version of every fee of the configuration (GET /v4/config/fees) that a load has seen: a fee whose fields change, or that disappears, ends its version when the snapshot that shows it is fetched. Key: fee_id, valid_from. fee_mismatch judges a payment by the versions in force when it executed (before the first snapshot: the first snapshot).';
COMMENT ON COLUMN fee_history.fee_id IS 'feeId.';
COMMENT ON COLUMN fee_history.value IS 'PERCENTAGE: percent, above 0 and below 100. FLAT_RATE: amount in currency_code, may be negative.';
COMMENT ON COLUMN fee_history.currency_code IS 'Currency of the fee, upper case.';
COMMENT ON COLUMN fee_history.role_type IS 'SENDING, RECEIVING, INSTITUTION_SENDING or INSTITUTION_RECEIVING: who is charged.';
COMMENT ON COLUMN fee_history.payment_type IS 'REGULAR or RETURN.';
COMMENT ON COLUMN fee_history.node_type IS 'INITIAL, INTERMEDIATE or TERMINAL: position of the node in the chain.';
COMMENT ON COLUMN fee_history.fee_type IS 'PERCENTAGE or FLAT_RATE.';
COMMENT ON COLUMN fee_history.partner_name IS 'Owner of the account, as a node address.';
COMMENT ON COLUMN fee_history.account_name IS 'Account the fee applies to.';
COMMENT ON COLUMN fee_history.upper_limit IS 'Upper bound of the slab (exclusive), for a slab-based fee.';
COMMENT ON COLUMN fee_history.lower_limit IS 'Lower bound of the slab (inclusive), for a slab-based fee.';
COMMENT ON COLUMN fee_history.payout_method IS 'Payout method the fee applies to (the payment''s payment_method).';
COMMENT ON COLUMN fee_history.fee_category IS 'NONE, OVERSEAS_DELIVERY_CHARGES, BENEFICIARY_BANK_CHARGE, PROCESSING_HANDLING_CHARGE, LOCAL_GOVERNMENT_CHARGE or OTHER.';
COMMENT ON COLUMN fee_history.fee_description IS 'Free text.';
COMMENT ON COLUMN fee_history.valid_from IS 'fetched_at of the first snapshot that showed this version.';
COMMENT ON COLUMN fee_history.valid_to IS 'fetched_at of the first later snapshot that did not (exclusive); null while current.';
COMMENT ON COLUMN fee_history.source_file IS 'Provenance: raw page file fees/p<NNNN>.json of the first snapshot that showed it.';
COMMENT ON COLUMN fee_history.source_line IS 'Provenance: element number in the page''s content, from 1.';
COMMENT ON COLUMN fee_history.run_id IS 'Provenance: run that first loaded this version.';

-- The configuration loaded before this migration is its first version.
INSERT INTO fee_history
SELECT f.fee_id, f.value, f.currency_code, f.role_type, f.payment_type, f.node_type, f.fee_type, f.partner_name,
       f.account_name, f.upper_limit, f.lower_limit, f.payout_method, f.fee_category, f.fee_description,
       coalesce(r.started_at, TIMESTAMPTZ '1970-01-01 00:00:00+00'), NULL, f.source_file, f.source_line, f.run_id
FROM fees f LEFT JOIN runs r USING (run_id);

-- fee_round rounds an amount half-even to 2 decimals, staying DECIMAL
-- (DuckDB's round_even answers DOUBLE).
CREATE MACRO fee_round(x) AS
    CASE WHEN abs(x * 100 - trunc(x * 100)) = 0.5 AND trunc(x * 100) % 2 = 0
         THEN CAST(trunc(x * 100) * 0.01 AS DECIMAL(38,2))
         ELSE CAST(round(x, 2) AS DECIMAL(38,2)) END;

-- payment_fee_legs, cheap on a 1M-payment day: the first and last execution result of each payment come
-- from one grouped pass instead of two window functions over every result,
-- only TRANSFER results are expanded into legs, and the matching fees are
-- listed unordered and then sorted (list_sort) instead of by an ordered
-- aggregate, which DuckDB sorts group by group. fee_id leads the struct, so
-- the order is still by fee_id. A PERCENTAGE fee is computed once before
-- fee_round expands it (OFFSET 0 keeps the subquery from being merged).

CREATE VIEW payment_fee_legs AS
WITH res AS (
    SELECT r.*, o.first_order, o.last_order
    FROM payment_execution_results r
    JOIN (SELECT payment_id, min(execution_result_order) AS first_order, max(execution_result_order) AS last_order
          FROM payment_execution_results WHERE result_list = 'execution' GROUP BY payment_id) o USING (payment_id)
    WHERE r.result_list = 'execution' AND r.execution_result_type = 'TRANSFER'
), legs AS (
    SELECT payment_id, execution_result_id, execution_timestamp, 'sender' AS side, sender_address AS account,
           transfer_currency_code AS currency, sending_amount AS amount, sending_fee AS charged,
           CASE WHEN execution_result_order = first_order THEN 'INITIAL' ELSE 'INTERMEDIATE' END AS node_type,
           execution_result_type
    FROM res
    UNION ALL
    SELECT payment_id, execution_result_id, execution_timestamp, 'receiver', receiver_address,
           transfer_currency_code, receiving_amount, receiving_fee,
           CASE WHEN execution_result_order = last_order THEN 'TERMINAL' ELSE 'INTERMEDIATE' END,
           execution_result_type
    FROM res
), first_snapshot AS (
    SELECT min(valid_from) AS at FROM fee_history
), judged AS (
    SELECT l.*, CASE WHEN p.payment_type = 'RETURN' THEN 'RETURN' ELSE 'REGULAR' END AS payment_type,
           p.payment_method, greatest(l.execution_timestamp, f.at) AS config_at
    FROM legs l
    JOIN payments p USING (payment_id)
    CROSS JOIN first_snapshot f
    WHERE l.execution_result_type = 'TRANSFER'
), matched AS (
    SELECT payment_id, execution_result_id, side, fee_id, fee_type, value, lower_limit, upper_limit,
           CASE fee_type WHEN 'PERCENTAGE' THEN fee_round(pct) WHEN 'FLAT_RATE' THEN fee_round(value) END AS fee
    FROM (SELECT j.payment_id, j.execution_result_id, j.side, h.fee_id, h.fee_type, h.value, h.lower_limit, h.upper_limit,
                 CASE WHEN h.fee_type = 'PERCENTAGE' THEN CAST(j.amount * h.value AS DECIMAL(38,14)) * 0.01 END AS pct
    FROM judged j
    JOIN fee_history h
      ON h.valid_from <= j.config_at AND (h.valid_to IS NULL OR j.config_at < h.valid_to)
     AND h.role_type IN (CASE j.side WHEN 'sender' THEN 'SENDING' ELSE 'RECEIVING' END,
                         CASE j.side WHEN 'sender' THEN 'INSTITUTION_SENDING' ELSE 'INSTITUTION_RECEIVING' END)
     AND h.payment_type = j.payment_type
     AND h.node_type = j.node_type
     AND h.currency_code = j.currency
     AND (h.partner_name IS NULL OR h.partner_name = split_part(j.account, '@', 2))
     AND (h.account_name IS NULL OR h.account_name = j.account OR h.account_name = split_part(j.account, '@', 1))
     AND (h.payout_method IS NULL OR h.payout_method = j.payment_method)
     AND (h.lower_limit IS NULL OR j.amount >= h.lower_limit)
     AND (h.upper_limit IS NULL OR j.amount < h.upper_limit)
         OFFSET 0)
), summed AS (
    SELECT payment_id, execution_result_id, side, count(*) AS fees,
           count(*) FILTER (WHERE fee IS NULL) AS unknown_fees,
           sum(fee) AS expected,
           list_sort(list({'fee_id': fee_id, 'fee_type': fee_type, 'value': value, 'lower_limit': lower_limit,
                 'upper_limit': upper_limit, 'fee': fee})) AS config
    FROM matched GROUP BY payment_id, execution_result_id, side
)
SELECT j.payment_id, j.execution_result_id, j.execution_timestamp, j.side, j.account, j.currency, j.amount,
       j.node_type, j.payment_type, j.payment_method, j.config_at,
       coalesce(j.charged, 0) AS charged,
       CASE WHEN coalesce(s.unknown_fees, 0) = 0 THEN coalesce(s.expected, 0) END AS expected,
       coalesce(s.fees, 0) AS fees,
       s.config
FROM judged j
LEFT JOIN summed s USING (payment_id, execution_result_id, side);
COMMENT ON VIEW payment_fee_legs IS 'Both sides of every TRANSFER execution result of a server API payment, with the fee it charged and the fee this node''s configuration gives it (DESIGN §3): the fees of fee_history in force at execution_timestamp (or in the first snapshot, for a payment before it) whose role_type (SENDING or INSTITUTION_SENDING for the sender''s side, RECEIVING or INSTITUTION_RECEIVING for the receiver''s), payment_type, node_type, currency_code, partner_name, account_name, payout_method and slab match, each rounded half-even to 2 decimals. fee_mismatch keeps the sides on this node''s accounts.';
COMMENT ON COLUMN payment_fee_legs.payment_id IS 'Payment id (payments.payment_id).';
COMMENT ON COLUMN payment_fee_legs.execution_result_id IS 'The TRANSFER execution result.';
COMMENT ON COLUMN payment_fee_legs.execution_timestamp IS 'When it executed.';
COMMENT ON COLUMN payment_fee_legs.side IS 'sender (sending_fee, sending_amount) or receiver (receiving_fee, receiving_amount).';
COMMENT ON COLUMN payment_fee_legs.account IS 'sender_address or receiver_address of the side.';
COMMENT ON COLUMN payment_fee_legs.currency IS 'transfer_currency_code: the currency of the amount and of the fee.';
COMMENT ON COLUMN payment_fee_legs.amount IS 'sending_amount or receiving_amount: the amount the fee and the slabs apply to.';
COMMENT ON COLUMN payment_fee_legs.node_type IS 'INITIAL (the sender of the first execution result), TERMINAL (the receiver of the last) or INTERMEDIATE.';
COMMENT ON COLUMN payment_fee_legs.payment_type IS 'RETURN for a return payment, else REGULAR.';
COMMENT ON COLUMN payment_fee_legs.payment_method IS 'The payment''s payment_method, matched with a fee''s payout_method.';
COMMENT ON COLUMN payment_fee_legs.config_at IS 'Instant whose configuration applies: execution_timestamp, or the first snapshot''s valid_from when later.';
COMMENT ON COLUMN payment_fee_legs.charged IS 'sending_fee or receiving_fee (0 when null).';
COMMENT ON COLUMN payment_fee_legs.expected IS 'Sum of the matching fees (0 when none); null when one of them has a fee_type recon cannot compute.';
COMMENT ON COLUMN payment_fee_legs.fees IS 'Number of matching fees.';
COMMENT ON COLUMN payment_fee_legs.config IS 'The matching fees: fee_id, fee_type, value, lower_limit, upper_limit and the fee each gives.';

-- payment_trace gains this node's expected and charged fee (replaces 0050's view; its comments again).
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
), fl AS (
    SELECT l.payment_id, sum(l.expected) AS fee_expected, sum(l.charged) AS fee_charged,
           string_agg(DISTINCT l.currency, ',' ORDER BY l.currency) AS fee_currency
    FROM payment_fee_legs l JOIN payments p USING (payment_id)
    WHERE (p.connector_role = 'SENDING' AND l.side = 'sender' AND l.node_type = 'INITIAL')
       OR (p.connector_role = 'RECEIVING' AND l.side = 'receiver' AND l.node_type = 'TERMINAL')
       OR (p.connector_role = 'INTERMEDIARY' AND l.node_type = 'INTERMEDIATE')
    GROUP BY l.payment_id
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
       fl.fee_expected, fl.fee_charged, fl.fee_currency,
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
LEFT JOIN fl USING (payment_id)
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
COMMENT ON COLUMN payment_trace.fee_expected IS 'This node''s fee on the payment recomputed from the fee configuration in force (payment_fee_legs), over the legs its connector_role places it on: SENDING the first leg''s sender, RECEIVING the last leg''s receiver, INTERMEDIARY the intermediate legs.';
COMMENT ON COLUMN payment_trace.fee_charged IS 'The fee this node charged on those legs (sending_fee or receiving_fee of the TRANSFER execution results); differs from fee_expected beyond tolerance: a fee_mismatch break.';
COMMENT ON COLUMN payment_trace.fee_currency IS 'Currency of fee_expected and fee_charged (the legs'' transfer currency; comma-separated if several).';


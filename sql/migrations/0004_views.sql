-- Views for analysts: open breaks, break summaries and ageing, and one row per payment with
-- what every source says about it.

CREATE VIEW open_breaks AS
SELECT break_id, rule_id, severity, status, event_date, age_days, payment_id, end_to_end_id, account,
       currency, expected, actual, difference, detail, left_source, right_source,
       first_seen_run, first_seen_at, last_seen_run
FROM breaks
WHERE status <> 'resolved';
COMMENT ON VIEW open_breaks IS 'Breaks not resolved (status new or persisting), most urgent first when ordered by severity, age_days DESC.';
COMMENT ON COLUMN open_breaks.break_id IS 'Stable id of the break (see breaks.break_id).';
COMMENT ON COLUMN open_breaks.rule_id IS 'Rule that found the break.';
COMMENT ON COLUMN open_breaks.severity IS 'P1 (most urgent) .. P4.';
COMMENT ON COLUMN open_breaks.status IS 'new or persisting.';
COMMENT ON COLUMN open_breaks.event_date IS 'UTC day the break belongs to.';
COMMENT ON COLUMN open_breaks.age_days IS 'Whole days since the break was first seen.';
COMMENT ON COLUMN open_breaks.payment_id IS 'Payment id, when the break is about a payment.';
COMMENT ON COLUMN open_breaks.end_to_end_id IS 'End-to-end id of the payment.';
COMMENT ON COLUMN open_breaks.account IS 'Account concerned, when one.';
COMMENT ON COLUMN open_breaks.currency IS 'Currency of expected and actual.';
COMMENT ON COLUMN open_breaks.expected IS 'Amount the reference side says.';
COMMENT ON COLUMN open_breaks.actual IS 'Amount the other side says (null when missing).';
COMMENT ON COLUMN open_breaks.difference IS 'actual - expected, or the missing amount.';
COMMENT ON COLUMN open_breaks.detail IS 'Human explanation of the break.';
COMMENT ON COLUMN open_breaks.left_source IS 'Provenance of the reference side.';
COMMENT ON COLUMN open_breaks.right_source IS 'Provenance of the other side.';
COMMENT ON COLUMN open_breaks.first_seen_run IS 'Run that first found the break.';
COMMENT ON COLUMN open_breaks.first_seen_at IS 'as_of of that run.';
COMMENT ON COLUMN open_breaks.last_seen_run IS 'Last run that found the break.';

CREATE VIEW break_summary AS
SELECT rule_id, severity, status, currency,
       count(*) AS breaks,
       sum(difference) AS total_difference,
       sum(abs(difference)) AS total_abs_difference,
       min(first_seen_at) AS oldest_first_seen_at,
       max(age_days) AS max_age_days
FROM breaks
GROUP BY ALL;
COMMENT ON VIEW break_summary IS 'Breaks counted and summed by rule, severity, status and currency.';
COMMENT ON COLUMN break_summary.rule_id IS 'Rule that found the breaks.';
COMMENT ON COLUMN break_summary.severity IS 'P1 .. P4.';
COMMENT ON COLUMN break_summary.status IS 'new, persisting or resolved.';
COMMENT ON COLUMN break_summary.currency IS 'Currency of the amounts (null for breaks without an amount).';
COMMENT ON COLUMN break_summary.breaks IS 'Number of breaks.';
COMMENT ON COLUMN break_summary.total_difference IS 'Sum of difference, in currency.';
COMMENT ON COLUMN break_summary.total_abs_difference IS 'Sum of abs(difference), in currency: the gross amount at stake.';
COMMENT ON COLUMN break_summary.oldest_first_seen_at IS 'When the oldest of these breaks was first seen.';
COMMENT ON COLUMN break_summary.max_age_days IS 'Age of the oldest, in whole days.';

CREATE VIEW break_ageing AS
SELECT rule_id, severity,
       CASE WHEN age_days <= 1 THEN '0-1' WHEN age_days <= 7 THEN '2-7'
            WHEN age_days <= 30 THEN '8-30' ELSE '>30' END AS age_bucket,
       CASE WHEN age_days <= 1 THEN 1 WHEN age_days <= 7 THEN 2
            WHEN age_days <= 30 THEN 3 ELSE 4 END AS bucket_order,
       count(*) AS breaks,
       sum(abs(difference)) AS total_abs_difference
FROM breaks
WHERE status <> 'resolved'
GROUP BY ALL;
COMMENT ON VIEW break_ageing IS 'Open breaks by rule, severity and age bucket (0-1, 2-7, 8-30, >30 days since first seen).';
COMMENT ON COLUMN break_ageing.rule_id IS 'Rule that found the breaks.';
COMMENT ON COLUMN break_ageing.severity IS 'P1 .. P4.';
COMMENT ON COLUMN break_ageing.age_bucket IS '0-1, 2-7, 8-30 or >30 (days, from age_days).';
COMMENT ON COLUMN break_ageing.bucket_order IS '1..4, to sort the buckets from youngest to oldest.';
COMMENT ON COLUMN break_ageing.breaks IS 'Number of open breaks.';
COMMENT ON COLUMN break_ageing.total_abs_difference IS 'Sum of abs(difference) (mixed currencies: use break_summary for amounts).';

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
           first(modified_at ORDER BY modified_at DESC) AS api_modified_at
    FROM payments GROUP BY payment_id
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
       api.api_quote_currency, api.api_executed_at, api.api_modified_at,
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
LEFT JOIN brk USING (payment_id);
COMMENT ON VIEW payment_trace IS 'One row per payment known to any source, with what each source says about it: PAYMENT_OPS (ops_*), RECON transactions aggregated (recon_*), statement entries (statement_*), liquidations (liquidation_*), the server API''s current state (api_*), FAILURE_CONVERSION_SSA (failure_*), and its open breaks.';
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

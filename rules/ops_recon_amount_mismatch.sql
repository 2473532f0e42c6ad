-- id: ops_recon_amount_mismatch
-- severity: P2
-- description: The sent or received amount or currency of a payment differ between PAYMENT_OPS and its RECON rows.
-- reads: payment_ops, recon_transactions
-- param: tolerance DECIMAL(38,12) = 0  (largest amount difference that is not a break, in the amount's currency)
WITH window_ops AS NOT MATERIALIZED (
    SELECT network_payment_id, sent_amount, sent_currency, received_amount, received_currency
    FROM payment_ops
    WHERE quote_ts >= $window_start AND quote_ts < $window_end
),
-- A first pass on the compared columns only: a RECON row equal in all of
-- them to its PAYMENT_OPS row is no break (unless the tolerance is negative),
-- so only the few others are paired in full. A RECON row dated outside the
-- window is kept whenever its payment is in it.
recon_rows AS MATERIALIZED (
    SELECT r.network_payment_id, r.report_id, r.source_line, r.sent_amount, r.sent_currency, r.received_amount, r.received_currency
    FROM recon_transactions r
    ANTI JOIN window_ops o ON o.network_payment_id = r.network_payment_id
        AND o.sent_amount IS NOT DISTINCT FROM r.sent_amount AND o.sent_currency IS NOT DISTINCT FROM r.sent_currency
        AND o.received_amount IS NOT DISTINCT FROM r.received_amount AND o.received_currency IS NOT DISTINCT FROM r.received_currency
    WHERE r.quote_ts >= $window_start AND r.quote_ts < $window_end AND CAST($tolerance AS DECIMAL(38,12)) >= 0
    UNION ALL
    SELECT r.network_payment_id, r.report_id, r.source_line, r.sent_amount, r.sent_currency, r.received_amount, r.received_currency
    FROM recon_transactions r
    JOIN window_ops o ON o.network_payment_id = r.network_payment_id
    WHERE NOT coalesce(r.quote_ts >= $window_start AND r.quote_ts < $window_end, false)
    UNION ALL
    SELECT r.network_payment_id, r.report_id, r.source_line, r.sent_amount, r.sent_currency, r.received_amount, r.received_currency
    FROM recon_transactions r
    SEMI JOIN window_ops o ON o.network_payment_id = r.network_payment_id
    WHERE r.quote_ts >= $window_start AND r.quote_ts < $window_end AND CAST($tolerance AS DECIMAL(38,12)) < 0
),
pairs AS (
    SELECT
        o.network_payment_id, o.end_to_end_id, o.quote_ts,
        o.report_id AS ops_report, o.source_line AS ops_line, r.report_id AS recon_report, r.source_line AS recon_line,
        o.sent_amount AS ops_sent, upper(o.sent_currency) AS ops_sent_currency,
        o.received_amount AS ops_received, upper(o.received_currency) AS ops_received_currency,
        r.sent_amount AS recon_sent, upper(r.sent_currency) AS recon_sent_currency,
        r.received_amount AS recon_received, upper(r.received_currency) AS recon_received_currency
    FROM payment_ops o
    JOIN recon_rows r ON r.network_payment_id = o.network_payment_id
    WHERE o.quote_ts >= $window_start AND o.quote_ts < $window_end
      AND o.network_payment_id IN (SELECT network_payment_id FROM recon_rows)
),
compared AS (
    SELECT *,
        ops_sent_currency IS DISTINCT FROM recon_sent_currency AS sent_currency_differs,
        coalesce(abs(ops_sent - recon_sent) > CAST($tolerance AS DECIMAL(38,12)), ops_sent IS DISTINCT FROM recon_sent) AS sent_differs,
        ops_received_currency IS DISTINCT FROM recon_received_currency AS received_currency_differs,
        coalesce(abs(ops_received - recon_received) > CAST($tolerance AS DECIMAL(38,12)), ops_received IS DISTINCT FROM recon_received) AS received_differs
    FROM pairs
),
first_difference AS (
    SELECT *, sent_currency_differs OR sent_differs AS on_sent_side
    FROM compared
    WHERE sent_currency_differs OR sent_differs OR received_currency_differs OR received_differs
    QUALIFY row_number() OVER (PARTITION BY network_payment_id ORDER BY recon_report, recon_line) = 1
)
SELECT
    network_payment_id AS break_key,
    quote_ts AS event_at,
    network_payment_id AS payment_id,
    end_to_end_id,
    CASE WHEN on_sent_side THEN ops_sent_currency ELSE ops_received_currency END AS currency,
    CASE WHEN on_sent_side THEN ops_sent ELSE ops_received END AS expected,
    -- an amount in another currency is not comparable: actual stays null then
    CASE
        WHEN on_sent_side AND NOT sent_currency_differs THEN recon_sent
        WHEN NOT on_sent_side AND NOT received_currency_differs THEN recon_received
    END AS actual,
    concat_ws('; ',
        CASE WHEN on_sent_side THEN 'sent ' || coalesce(amount_text(ops_sent), 'null') || ' ' || coalesce(ops_sent_currency, 'null')
            || ' in PAYMENT_OPS, ' || coalesce(amount_text(recon_sent), 'null') || ' ' || coalesce(recon_sent_currency, 'null') || ' in RECON' END,
        CASE WHEN received_currency_differs OR received_differs THEN 'received ' || coalesce(amount_text(ops_received), 'null') || ' '
            || coalesce(ops_received_currency, 'null') || ' in PAYMENT_OPS, ' || coalesce(amount_text(recon_received), 'null') || ' '
            || coalesce(recon_received_currency, 'null') || ' in RECON' END) AS detail,
    'PAYMENT_OPS report ' || ops_report || ' line ' || ops_line AS left_source,
    'RECON report ' || recon_report || ' line ' || recon_line AS right_source
FROM first_difference

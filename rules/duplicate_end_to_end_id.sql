-- id: duplicate_end_to_end_id
-- severity: P3
-- description: One end_to_end_id from one sender (network address) on more than one distinct REGULAR payment.
-- reads: payment_ops, statement_entries
--
-- Reports carry no payment_type: a payment is taken as REGULAR unless its
-- statement entry says it returns another payment. The break is keyed on the
-- sender and the id, and dated by the second payment that used it.
WITH regular AS MATERIALIZED (
    SELECT o.rowid AS row_id, split_part(o.sender_address, '@', 2) AS sender_node, o.end_to_end_id
    FROM payment_ops o
    ANTI JOIN (SELECT transaction_id FROM statement_entries WHERE returns_payment_with_id IS NOT NULL) e
        ON e.transaction_id = o.network_payment_id
    WHERE o.end_to_end_id IS NOT NULL
),
-- the rows of repeated ids, found on the id columns alone; only those are read whole
repeated AS (
    SELECT r.row_id
    FROM regular r
    SEMI JOIN (SELECT sender_node, end_to_end_id FROM regular GROUP BY ALL HAVING count(*) > 1) d
        USING (sender_node, end_to_end_id)
),
ranked AS (
    SELECT
        o.network_payment_id, o.end_to_end_id, o.quote_ts, o.sender_address, o.sent_currency, o.sent_amount,
        o.report_id, o.source_line, split_part(o.sender_address, '@', 2) AS sender_node,
        row_number() OVER same_id AS n,
        count(*) OVER (PARTITION BY split_part(o.sender_address, '@', 2), o.end_to_end_id) AS copies,
        first_value(o.network_payment_id) OVER same_id AS first_payment,
        first_value('PAYMENT_OPS report ' || o.report_id || ' line ' || o.source_line) OVER same_id AS first_source
    FROM payment_ops o
    WHERE o.rowid IN (SELECT row_id FROM repeated)
    WINDOW same_id AS (PARTITION BY split_part(o.sender_address, '@', 2), o.end_to_end_id ORDER BY o.quote_ts, o.network_payment_id)
)
SELECT
    sender_node || '|' || end_to_end_id AS break_key,
    quote_ts AS event_at,
    network_payment_id AS payment_id,
    end_to_end_id,
    sender_address AS account,
    sent_currency AS currency,
    sent_amount AS actual,
    copies || ' payments of sender ' || sender_node || ' use this end_to_end_id; the first is ' || first_payment AS detail,
    first_source AS left_source,
    'PAYMENT_OPS report ' || report_id || ' line ' || source_line AS right_source
FROM ranked
WHERE n = 2
  AND quote_ts >= $window_start AND quote_ts < $window_end

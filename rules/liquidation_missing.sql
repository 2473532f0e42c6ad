-- id: liquidation_missing
-- severity: P2
-- description: A COMPLETED payment received by this node through a destination exchange has no liquidation.
-- reads: payment_ops, liquidations, quarantine
-- param: grace INTERVAL = 24 hours  (after executed_at before a missing liquidation is a break)
--
-- PAYMENT_OPS names destination_exchange only when we receive across
-- currencies (a receiver-only field): such a payment's XRP is liquidated
-- there. Any loaded liquidation naming the payment matches it, whenever it
-- was created. A liquidation of the payment that sits in quarantine is not
-- missing (row_quarantined reports it).
--
-- The payments are judged on the few columns the test needs (a plain anti
-- join, not NOT EXISTS, which is planned as a DELIM join over the distinct
-- payment ids); the other columns are read for the missing ones only.
WITH missing AS (
    SELECT o.rowid AS row_id
    FROM payment_ops o
    JOIN node_accounts n ON n.account = o.receiver_address
    ANTI JOIN liquidations l ON l.network_payment_id = o.network_payment_id
    WHERE o.quote_ts >= $window_start AND o.quote_ts < $window_end
      AND o.payment_state = 'COMPLETED'
      AND o.destination_exchange IS NOT NULL
)
SELECT
    o.network_payment_id AS break_key,
    o.quote_ts AS event_at,
    coalesce(o.executed_at, o.quote_ts) + CAST($grace AS INTERVAL) AS due_at,
    o.network_payment_id AS payment_id,
    o.end_to_end_id,
    o.receiver_address AS account,
    o.received_currency AS currency,
    o.received_amount AS expected,
    'the COMPLETED payment was received through ' || o.destination_exchange
        || '; the liquidation service has no liquidation of it' AS detail,
    'PAYMENT_OPS report ' || o.report_id || ' line ' || o.source_line AS left_source,
    'no liquidation with network_payment_id ' || o.network_payment_id AS right_source
FROM payment_ops o
JOIN missing m ON m.row_id = o.rowid
WHERE NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.source = 'liquidation' AND q.payment_id = o.network_payment_id)

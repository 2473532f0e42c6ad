-- id: fx_rate_outlier
-- severity: P4
-- description: For a cross-currency payment with fx_spot_rate, received_amount / sent_amount deviates from the rate by more than a threshold.
-- reads: payment_ops
-- param: threshold_bps DECIMAL(38,12) = 200  (largest deviation that is not a break, in basis points of sent_amount * fx_spot_rate)
--
-- Compared without division, exactly: |received - sent * rate| * 10000 > threshold_bps * sent * rate.
WITH quoted AS (
    SELECT rowid AS row_id, sent_amount, received_amount, fx_spot_rate,
           -- DOUBLE copies, each cast once (as_double: the cheap cast when it fits)
           as_double(received_amount) AS received_d, as_double(sent_amount) * as_double(fx_spot_rate) AS at_spot_d
    FROM payment_ops
    WHERE quote_ts >= $window_start AND quote_ts < $window_end
      AND fx_spot_rate IS NOT NULL
      AND upper(sent_currency) <> upper(received_currency)
),
candidates AS (
    SELECT row_id
    FROM quoted
    -- A cheap necessary condition in DOUBLE (its error is far inside the
    -- margin) spares the exact DECIMAL(38) arithmetic on most rows.
    WHERE abs(received_d - at_spot_d) * 10000 + 1e-6 * (abs(received_d) + abs(at_spot_d)) + 1e-6
          >= CAST(CAST(CAST($threshold_bps AS DECIMAL(38,12)) AS DECIMAL(18,4)) AS DOUBLE) * at_spot_d
),
-- the other columns are read for the few candidates only
judged AS (
    SELECT o.*, CAST(o.sent_amount * o.fx_spot_rate AS DECIMAL(38,12)) AS at_spot
    FROM payment_ops o
    JOIN candidates c ON c.row_id = o.rowid
)
SELECT
    network_payment_id AS break_key,
    quote_ts AS event_at,
    network_payment_id AS payment_id,
    end_to_end_id,
    sender_address AS account,
    received_currency AS currency,
    at_spot AS expected,
    received_amount AS actual,
    'received ' || amount_text(received_amount) || ' ' || received_currency || ' for ' || amount_text(sent_amount) || ' '
        || sent_currency || '; at fx_spot_rate ' || amount_text(fx_spot_rate) || ' that is ' || amount_text(at_spot)
        || ', ' || round(CAST(abs(received_amount - at_spot) * 10000 AS DOUBLE) / CAST(at_spot AS DOUBLE), 2)
        || ' bps off' AS detail, -- the bps figure is text for people; the test below is exact
    'PAYMENT_OPS report ' || report_id || ' line ' || source_line AS left_source
FROM judged
WHERE abs(received_amount - at_spot) * 10000
    > CAST(CAST($threshold_bps AS DECIMAL(38,12)) AS DECIMAL(18,4)) * at_spot

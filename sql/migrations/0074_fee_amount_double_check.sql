-- fee_amount without DECIMAL(38,12) arithmetic on most legs (issue 13's
-- catalogue bar). 0072 kept the DOUBLE estimate of a percentage fee when an
-- exact DECIMAL test proved it (|amount * value - 100 r| < 0.5), a 128-bit
-- product on every leg, and rounded every flat rate with fee_round, 128-bit
-- too. The same proof holds in DOUBLE: when d (100 times the fee: amount *
-- value, or 100 * value for a flat rate) is below 1e9 in magnitude its error
-- is under 1e-6, so d within 0.49 of an integer n (more than 0.01 from any
-- tie x.5) means the exact fee rounds half-even to n / 100 too, which
-- rounding d / 100 to 2 decimals gives. Otherwise (near a tie, or large)
-- fee_round computes it exactly. sql.TestFeeAmountIsExact checks it against
-- shopspring/decimal; on a 1M-payment day fee_mismatch evaluates it for
-- 1.2M leg-fee pairs.
CREATE OR REPLACE MACRO fee_amount(fee_type, value, amount) AS
    CASE fee_type
        WHEN 'FLAT_RATE' THEN
            CASE WHEN abs(as_double(value) * 100) < 1e9
                      AND abs(as_double(value) * 100 - round(as_double(value) * 100)) < 0.49
                 THEN CAST(round(as_double(value), 2) AS DECIMAL(38,2))
                 ELSE fee_round(value) END
        WHEN 'PERCENTAGE' THEN
            CASE WHEN abs(as_double(amount) * as_double(value)) < 1e9
                      AND abs(as_double(amount) * as_double(value) - round(as_double(amount) * as_double(value))) < 0.49
                 THEN CAST(round(as_double(amount) * as_double(value) / 100, 2) AS DECIMAL(38,2))
                 ELSE fee_round(CAST(amount * value AS DECIMAL(38,14)) * 0.01) END
    END;

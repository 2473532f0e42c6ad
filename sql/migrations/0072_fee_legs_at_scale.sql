-- fee_mismatch at 1M payments a day (issue 17). 0060's payment_fee_legs
-- judged every side of every TRANSFER result (3.6M legs at 1M payments) and
-- listed each leg's matching fees: it ran out of DuckDB's 512 MB. The legs
-- now come from a table macro that keeps the window and this node's
-- accounts before any join; the view is that macro unfiltered. The match of
-- a fee and a leg is one macro (fee_applies), so the rule lists a break's
-- fees with the same test. A percentage fee is estimated in DOUBLE and kept
-- when it is provably the half-even rounding (within half a cent of the exact
-- product); otherwise fee_round computes it: DECIMAL(38,12) division is slow.

-- fee_applies: fee version h_* applies to a leg (DESIGN §3; docs/rules.md):
-- in force at config_at, role of the leg's side, payment type, node type,
-- currency, partner, account, payout method, slab [lower, upper).
CREATE MACRO fee_applies(h_valid_from, h_valid_to, h_role_type, h_payment_type, h_node_type, h_currency_code,
                         h_partner_name, h_account_name, h_payout_method, h_lower_limit, h_upper_limit,
                         config_at, side, payment_type, node_type, currency, account, payment_method, amount) AS
    h_valid_from <= config_at AND (h_valid_to IS NULL OR config_at < h_valid_to)
    AND h_role_type IN (CASE side WHEN 'sender' THEN 'SENDING' ELSE 'RECEIVING' END,
                        CASE side WHEN 'sender' THEN 'INSTITUTION_SENDING' ELSE 'INSTITUTION_RECEIVING' END)
    AND h_payment_type = payment_type
    AND h_node_type = node_type
    AND h_currency_code = currency
    AND (h_partner_name IS NULL OR h_partner_name = split_part(account, '@', 2))
    AND (h_account_name IS NULL OR h_account_name = account OR h_account_name = split_part(account, '@', 1))
    AND (h_payout_method IS NULL OR h_payout_method = payment_method)
    AND (h_lower_limit IS NULL OR amount >= h_lower_limit)
    AND (h_upper_limit IS NULL OR amount < h_upper_limit);

-- as_double: x as DOUBLE, for estimates only. A DECIMAL(38,12) converts
-- through a slow division; one that fits DECIMAL(18,12) converts cheaply.
CREATE MACRO as_double(x) AS coalesce(CAST(TRY_CAST(x AS DECIMAL(18,12)) AS DOUBLE), CAST(x AS DOUBLE));

-- fee_amount: what a fee of fee_type and value charges on amount, rounded
-- half-even to 2 decimals; null for a fee_type recon cannot compute. For a
-- percentage, the DOUBLE estimate r is the rounding when |amount * value -
-- 100 r| < 0.5, i.e. the exact fee is less than half a cent from r.
CREATE MACRO fee_amount(fee_type, value, amount) AS
    CASE fee_type
        WHEN 'FLAT_RATE' THEN fee_round(value)
        WHEN 'PERCENTAGE' THEN
            CASE WHEN abs(amount * value - 100 * CAST(round(as_double(amount) * as_double(value) / 100, 2) AS DECIMAL(38,2))) < 0.5
                 THEN CAST(round(as_double(amount) * as_double(value) / 100, 2) AS DECIMAL(38,2))
                 ELSE fee_round(CAST(amount * value AS DECIMAL(38,14)) * 0.01) END
    END;

-- payment_fee_legs_for: the sides of the TRANSFER execution results executed
-- in [judged_from, judged_to) on the given accounts (null: no bound, every
-- account), with the fee charged and the fee recomputed. result_row is the
-- execution result's rowid: the other columns of a leg are read through it,
-- so the legs judged stay narrow (a 1M-payment day has 1.9M of them).
CREATE MACRO payment_fee_legs_for(accounts, judged_from, judged_to) AS TABLE
WITH ends AS (
    SELECT payment_id, min(execution_result_order) AS first_order, max(execution_result_order) AS last_order
    FROM payment_execution_results WHERE result_list = 'execution' GROUP BY payment_id
), results AS (
    SELECT rowid AS result_row, payment_id, execution_timestamp, transfer_currency_code, execution_result_order,
           sender_address, receiver_address, sending_amount, receiving_amount, sending_fee, receiving_fee
    FROM payment_execution_results
    WHERE result_list = 'execution' AND execution_result_type = 'TRANSFER'
      AND (judged_from IS NULL OR execution_timestamp >= judged_from)
      AND (judged_to IS NULL OR execution_timestamp < judged_to)
      AND (accounts IS NULL OR list_contains(accounts, sender_address) OR list_contains(accounts, receiver_address))
), sides AS (
    SELECT r.result_row, r.payment_id, r.execution_timestamp, r.transfer_currency_code AS currency,
           unnest([{'side': 'sender', 'account': r.sender_address, 'amount': r.sending_amount, 'charged': r.sending_fee,
                    'node_type': CASE WHEN r.execution_result_order = e.first_order THEN 'INITIAL' ELSE 'INTERMEDIATE' END},
                   {'side': 'receiver', 'account': r.receiver_address, 'amount': r.receiving_amount, 'charged': r.receiving_fee,
                    'node_type': CASE WHEN r.execution_result_order = e.last_order THEN 'TERMINAL' ELSE 'INTERMEDIATE' END}],
                  recursive := true)
    FROM results r JOIN ends e USING (payment_id)
), legs AS MATERIALIZED (
    SELECT s.result_row * 2 + CASE s.side WHEN 'sender' THEN 0 ELSE 1 END AS leg, s.result_row, s.side, s.account,
           s.currency, s.amount, s.charged, s.node_type,
           CASE WHEN p.payment_type = 'RETURN' THEN 'RETURN' ELSE 'REGULAR' END AS payment_type, p.payment_method,
           greatest(s.execution_timestamp, (SELECT min(valid_from) FROM fee_history)) AS config_at
    FROM (SELECT * FROM sides WHERE accounts IS NULL OR list_contains(accounts, account)) s
    JOIN payments p USING (payment_id)
), matched AS (
    SELECT l.leg, fee_amount(h.fee_type, h.value, l.amount) AS fee
    FROM legs l
    JOIN fee_history h
      ON fee_applies(h.valid_from, h.valid_to, h.role_type, h.payment_type, h.node_type, h.currency_code,
                     h.partner_name, h.account_name, h.payout_method, h.lower_limit, h.upper_limit,
                     l.config_at, l.side, l.payment_type, l.node_type, l.currency, l.account, l.payment_method, l.amount)
), summed AS (
    SELECT leg, count(*) AS fees, count(*) FILTER (WHERE fee IS NULL) AS unknown_fees, sum(fee) AS expected
    FROM matched GROUP BY leg
)
SELECT l.result_row, l.side, l.account, l.currency, l.amount, l.node_type, l.payment_type, l.payment_method, l.config_at,
       coalesce(l.charged, 0) AS charged,
       CASE WHEN coalesce(s.unknown_fees, 0) = 0 THEN coalesce(s.expected, 0) END AS expected,
       coalesce(s.fees, 0) AS fees
FROM legs l LEFT JOIN summed s USING (leg);

CREATE OR REPLACE VIEW payment_fee_legs AS
SELECT r.payment_id, r.execution_result_id, r.execution_timestamp, l.side, l.account, l.currency, l.amount, l.node_type,
       l.payment_type, l.payment_method, l.config_at, l.charged, l.expected, l.fees, r.source_file, r.source_line
FROM payment_fee_legs_for(NULL, NULL, NULL) l
JOIN payment_execution_results r ON r.rowid = l.result_row;
COMMENT ON VIEW payment_fee_legs IS 'Both sides of every TRANSFER execution result of a server API payment, with the fee it charged and the fee this node''s configuration gives it (DESIGN §3): the fees of fee_history in force at execution_timestamp (or in the first snapshot, for a payment before it) that fee_applies to the side (role_type SENDING or INSTITUTION_SENDING for the sender''s side, RECEIVING or INSTITUTION_RECEIVING for the receiver''s; payment_type, node_type, currency_code, partner_name, account_name, payout_method and slab), each rounded half-even to 2 decimals (fee_amount). The table macro payment_fee_legs_for(accounts, judged_from, judged_to) gives the same legs for some accounts and a window (with result_row, the execution result''s rowid, for its other columns); fee_mismatch keeps this node''s accounts. A leg''s matching fees: fee_history rows for which fee_applies(...) is true.';
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
COMMENT ON COLUMN payment_fee_legs.source_file IS 'Provenance of the execution result: raw file.';
COMMENT ON COLUMN payment_fee_legs.source_line IS 'Provenance of the execution result: record number in the file.';

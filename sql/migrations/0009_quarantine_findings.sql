-- Quarantine is a finding: every quarantined row is a break of rule row_quarantined, and the
-- rules that report a payment missing from a source skip it while that source's row for the
-- payment sits in quarantine. So the quarantine keeps the payment id and the time of the row
-- when they can be read.

ALTER TABLE quarantine ADD COLUMN payment_id VARCHAR;
ALTER TABLE quarantine ADD COLUMN row_time TIMESTAMPTZ;
COMMENT ON COLUMN quarantine.payment_id IS 'Payment id of the row when it could be read (best effort): network_payment_id of a report row or liquidation, payment_id of a server API payment, transaction_id of a statement entry. Rules reporting a payment missing from this source skip it while the row is here.';
COMMENT ON COLUMN quarantine.row_time IS 'Time of the row when it could be read (best effort): quote_ts or execution_timestamp of a report row, created_at of other rows; the day of the row_quarantined break (else window_from, else the first day of the run that quarantined it).';
COMMENT ON TABLE quarantine IS 'Malformed source rows kept aside instead of loaded (bad decimal or timestamp, wrong column count, invalid UTF-8, missing key, two spellings of one field with different values), with where they were and why. Each is a break of rule row_quarantined until a reload of its slice brings the row in good form. An unknown value of a list is not malformed: it loads (see unknown_values). Reloading a slice replaces its quarantine rows.';

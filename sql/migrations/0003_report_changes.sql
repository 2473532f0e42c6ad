-- Changes between generations of a report. The provider rebuilds the month-to-date report
-- every day; when a newer generation changes a row already loaded, the load records what
-- changed before it replaces the row.

CREATE TABLE report_changes (
    report_type        VARCHAR NOT NULL,
    network_payment_id VARCHAR NOT NULL,
    row_key            VARCHAR NOT NULL,
    change             VARCHAR NOT NULL,
    column_name        VARCHAR,
    old_value          VARCHAR,
    new_value          VARCHAR,
    old_report_id      VARCHAR NOT NULL,
    new_report_id      VARCHAR NOT NULL,
    old_source_line    BIGINT NOT NULL,
    new_source_line    BIGINT,
    run_id             VARCHAR NOT NULL
);
COMMENT ON TABLE report_changes IS 'Rows of a report that a newer generation changed (an amount, currency or state) or no longer lists, one row per changed value. Rows a newer generation only adds are not changes.';
COMMENT ON COLUMN report_changes.report_type IS 'PAYMENT_OPS, RECON or FAILURE_CONVERSION_SSA.';
COMMENT ON COLUMN report_changes.network_payment_id IS 'Payment of the changed row.';
COMMENT ON COLUMN report_changes.row_key IS 'Key of the row in its table: the payment id, then transaction_id (RECON) or ssa_remote_transfer_id (FAILURE_CONVERSION_SSA), joined by /; #n marks the n-th row of a key that appears more than once.';
COMMENT ON COLUMN report_changes.change IS 'changed (column_name went from old_value to new_value) or removed (the newer generation covers the row''s day but no longer lists it).';
COMMENT ON COLUMN report_changes.column_name IS 'Column that changed; null for removed.';
COMMENT ON COLUMN report_changes.old_value IS 'Value in the older generation, as text (amounts with 12 decimals).';
COMMENT ON COLUMN report_changes.new_value IS 'Value in the newer generation, as text; null for removed.';
COMMENT ON COLUMN report_changes.old_report_id IS 'reportId of the older generation (the row as loaded before).';
COMMENT ON COLUMN report_changes.new_report_id IS 'reportId of the newer generation.';
COMMENT ON COLUMN report_changes.old_source_line IS 'Line of the row in the older generation''s file.';
COMMENT ON COLUMN report_changes.new_source_line IS 'Line of the row in the newer generation''s file; null for removed.';
COMMENT ON COLUMN report_changes.run_id IS 'Run that loaded the newer generation.';

-- Open value lists: the spec calls the full lists of payment states, liquidation statuses,
-- transaction types and others "not shown", so a value recon does not know loads as received
-- and is counted, per run, in unknown_values. known_values is the list recon knows
-- (transform/schema.go), rewritten by every load.

CREATE TABLE known_values (
    table_name  VARCHAR NOT NULL,
    column_name VARCHAR NOT NULL,
    value       VARCHAR NOT NULL,
    PRIMARY KEY (table_name, column_name, value)
);
COMMENT ON TABLE known_values IS 'Values recon knows for each column with a list of values (payment states, liquidation statuses, transaction types, fee types, ...). The lists are open: another value loads as received, is counted in unknown_values, and the rules treat it as no known state (never COMPLETED, FAILED or any other, and not terminal). Rewritten by every load from the list recon ships.';
COMMENT ON COLUMN known_values.table_name IS 'Table of the column.';
COMMENT ON COLUMN known_values.column_name IS 'Column with a list of values.';
COMMENT ON COLUMN known_values.value IS 'One known value, exactly as stored (trimmed, case kept).';

CREATE TABLE unknown_values (
    run_id      VARCHAR NOT NULL,
    table_name  VARCHAR NOT NULL,
    column_name VARCHAR NOT NULL,
    value       VARCHAR NOT NULL,
    rows        BIGINT NOT NULL,
    PRIMARY KEY (run_id, table_name, column_name, value)
);
COMMENT ON TABLE unknown_values IS 'Values outside known_values in the rows a run loaded, counted per column: a new state or type from the provider, loaded as received. The run''s summary.json and summary.html show them.';
COMMENT ON COLUMN unknown_values.run_id IS 'Run that loaded the rows (report rows: the run that loaded their report, report_files.run_id).';
COMMENT ON COLUMN unknown_values.table_name IS 'Table of the column.';
COMMENT ON COLUMN unknown_values.column_name IS 'Column with a list of values (see known_values).';
COMMENT ON COLUMN unknown_values.value IS 'The unknown value, as stored (trimmed, case kept).';
COMMENT ON COLUMN unknown_values.rows IS 'Rows of the table, loaded by the run, with this value.';

COMMENT ON TABLE quarantine IS 'Malformed source rows kept aside instead of loaded (bad decimal or timestamp, wrong column count, invalid UTF-8, missing key, two spellings of one field with different values), with where they were and why. An unknown value of a list is not malformed: it loads (see unknown_values). Reloading a slice replaces its quarantine rows.';
COMMENT ON COLUMN quarantine.raw IS 'The row as received: the CSV record''s text or the JSON element; a byte that is not UTF-8 is written as \xNN (the reason names it and its offset).';

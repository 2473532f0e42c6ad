-- The state cache (issue 17, docs/archive.md "The state cache"): what a run
-- needs to reference a state slice already in the archive without writing
-- and hashing it again. Not part of any run's state (like the run ledger).
CREATE TABLE state_cache (
    archive     VARCHAR NOT NULL,
    table_name  VARCHAR NOT NULL,
    slice_value VARCHAR,
    fingerprint VARCHAR NOT NULL,
    sha256      VARCHAR NOT NULL,
    size        BIGINT NOT NULL,
    rows        BIGINT NOT NULL
);
COMMENT ON TABLE state_cache IS 'State slices the last archived run stored or referenced: a slice whose fingerprint matches an entry here, and whose object the archive still has, is referenced by its sha256 without being written or hashed again. Replaced after every successful upload; not part of the archived state.';
COMMENT ON COLUMN state_cache.archive IS 'Archive URL (RECON_ARCHIVE_URL) holding the object; entries of another archive are not used.';
COMMENT ON COLUMN state_cache.table_name IS 'Warehouse table of the slice.';
COMMENT ON COLUMN state_cache.slice_value IS 'Value of the slice column (run_id, report_id or event_date) as text; NULL for the NULL value or a table with no slice column.';
COMMENT ON COLUMN state_cache.fingerprint IS 'Fingerprint of the slice when it was written: format and DuckDB version, the table''s columns and types, row count, and hash aggregates of the rows with their order.';
COMMENT ON COLUMN state_cache.sha256 IS 'Hex sha256 of the slice''s Parquet bytes: its object is objects/sha256/<2 hex>/<sha256>.parquet.';
COMMENT ON COLUMN state_cache.size IS 'Bytes of the Parquet object.';
COMMENT ON COLUMN state_cache.rows IS 'Rows of the slice.';

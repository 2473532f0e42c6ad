-- The breaks' state slices go by the month of event_date (output/state.go,
-- docs/archive.md), not the day 0071's comment names.
COMMENT ON COLUMN state_cache.slice_value IS 'Value of the slice of the table''s state as text: the run_id or report_id, or for breaks the month of event_date (YYYY-MM); NULL for the NULL value or a table with no slice column.';

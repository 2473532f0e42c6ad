-- Server API payments are pulled by modified_at too (payments that never
-- executed), so the comments of payments say so.
COMMENT ON TABLE payments IS 'Payments as the server API shows them now (GET /v4/payments over the run''s window by EXECUTED_AT and by MODIFIED_AT, content[] of Payment). Key: payment_id; a newer fetch replaces the row, and of one payment on both lists the row last modified is kept.';
COMMENT ON COLUMN payments.source_file IS 'Provenance: raw page file payments/<from>_<to>_p<NNNN>.json (by executed_at) or payments/modified_<from>_<to>_p<NNNN>.json (by modified_at).';

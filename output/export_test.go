package output

import (
	"context"
	"database/sql"
)

// CacheRef is a state slice with its object, as the state cache holds it.
type CacheRef struct {
	Table            string
	Slice            *string
	Fingerprint, SHA string
	Size, Rows       int64
}

// ReplaceStateCache is replaceStateCache, for tests.
func ReplaceStateCache(ctx context.Context, db *sql.DB, url string, refs []CacheRef) error {
	rs := make([]stateRef, len(refs))
	for i, r := range refs {
		rs[i] = stateRef{Table: r.Table, Slice: r.Slice, Fingerprint: r.Fingerprint, SHA256: r.SHA, Size: r.Size, Rows: r.Rows}
	}
	return replaceStateCache(ctx, db, url, rs)
}

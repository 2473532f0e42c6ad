package extract

import (
	"context"
	"fmt"
	"time"

	"recon/extract/raw"
)

// SaveTransferPages pages the transfers newest first by size into dir as
// Extract does (savePages), until a page reaches before since.
func (c *Client) SaveTransferPages(ctx context.Context, dir string, since time.Time, size int) ([]raw.File, error) {
	return c.savePages(ctx, dir, c.transferPager(since, size), func(page int) raw.File {
		return raw.File{Source: raw.SourceTransfer, Page: page, Path: fmt.Sprintf("transfers/p%04d.json", page)}
	})
}

package extract

import (
	"context"
	"fmt"
	"time"
)

// SaveTransferPages pages the transfers newest first by size into dir as
// Extract does (savePages), until a page reaches before since.
func (c *Client) SaveTransferPages(ctx context.Context, dir string, since time.Time, size int) ([]RawFile, error) {
	return c.savePages(ctx, dir, c.transferPager(since, size), func(page int) RawFile {
		return RawFile{Source: SourceTransfer, Page: page, Path: fmt.Sprintf("transfers/p%04d.json", page)}
	})
}

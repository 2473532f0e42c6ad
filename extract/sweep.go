package extract

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"recon/extract/raw"
)

// labelSweepDir holds the pages of the label sweep.
const labelSweepDir = "payment_labels"

// labelSweepJobs: with the server API sources, the label sweep: the
// payments carrying each of SweptLabels, whatever their date. It is one
// source whose files the loader replaces whole, so a label removed since
// the last sweep drops its payment; a label the API fails to list leaves
// the whole sweep not pulled (notPulled), its table as it was.
func (c *Client) labelSweepJobs(req Request, dir string) []job {
	w := req.Server
	if w.IsZero() || len(SweptLabels) == 0 {
		return nil
	}
	first := "GET " + c.paymentURL(PaymentQuery{Labels: SweptLabels[:1]}, 0, MaxServerPage)
	call := Call{What: "payments by label (sweep, any date)", Window: w, Request: first,
		Then: "the next pages, then the same for " + strings.Join(SweptLabels[1:], ", ")}
	return []job{{call: call, run: func(ctx context.Context) (outcome, error) {
		var files []raw.File
		for _, label := range SweptLabels {
			q := PaymentQuery{Labels: []string{label}}
			fs, err := c.savePages(ctx, dir, c.paymentPager(q, MaxServerPage), func(page int) raw.File {
				return raw.File{Source: raw.SourcePaymentLabel, Window: w, Page: page, Path: labelSweepPath(label, page),
					Request: "GET " + c.paymentURL(q, page, MaxServerPage)}
			})
			if pe := (*pullError)(nil); errors.As(err, &pe) {
				if rmErr := os.RemoveAll(filepath.Join(dir, labelSweepDir)); rmErr != nil {
					return outcome{}, fmt.Errorf("%s: %w", raw.SourcePaymentLabel, rmErr)
				}
				return c.notPulled(ctx, raw.SourcePaymentLabel, w, first, pe.err)
			}
			if err != nil {
				return outcome{}, fmt.Errorf("%s %s: %w", raw.SourcePaymentLabel, label, err)
			}
			files = append(files, fs...)
		}
		c.log.Info(raw.SourcePaymentLabel, "labels", len(SweptLabels), "pages", len(files))
		return outcome{files: files}, nil
	}}}
}

// labelSweepPath names page p of the sweep of label: payment_labels/<label>_p<NNNN>.json.
func labelSweepPath(label string, page int) string {
	return fmt.Sprintf("%s/%s_p%04d.json", labelSweepDir, safeName(label), page)
}

package extract

import (
	"context"
	"errors"
	"fmt"

	"recon/extract/raw"
)

// labelSweepJobs: with the server API sources, the label sweep: for each of
// SweptLabels, the payments carrying it, whatever their date. The loader
// replaces the sweep's table whole with the pages of a run, so a label
// removed since the last sweep drops its payment. A label the API fails to
// list is not pulled (notPulled): the run is incomplete and payment_stale
// is held, so no break of the sweep resolves on a partial sweep.
func (c *Client) labelSweepJobs(req Request, dir string) []job {
	w := req.Server
	if w.IsZero() {
		return nil
	}
	var jobs []job
	for _, label := range SweptLabels {
		q := PaymentQuery{Labels: []string{label}}
		first := "GET " + c.paymentURL(q, 0, MaxServerPage)
		jobs = append(jobs, job{
			call: Call{What: "payments labelled " + label + " (sweep, any date)", Request: first,
				Then: "the next pages up to the last"},
			run: func(ctx context.Context) (outcome, error) {
				files, err := c.savePages(ctx, dir, c.paymentPager(q, MaxServerPage), func(page int) raw.File {
					return raw.File{Source: raw.SourcePaymentLabel, Window: w, Page: page, Path: labelSweepPath(label, page),
						Request: "GET " + c.paymentURL(q, page, MaxServerPage)}
				})
				if pe := (*pullError)(nil); errors.As(err, &pe) {
					return c.notPulled(ctx, raw.SourcePaymentLabel, w, first, pe.err)
				}
				if err != nil {
					return outcome{}, fmt.Errorf("%s %s: %w", raw.SourcePaymentLabel, label, err)
				}
				c.log.Info(raw.SourcePaymentLabel, "label", label, "pages", len(files))
				return outcome{files: files}, nil
			},
		})
	}
	return jobs
}

// labelSweepPath names page p of the sweep of label: payment_labels/<label>_p<NNNN>.json.
func labelSweepPath(label string, page int) string {
	return fmt.Sprintf("payment_labels/%s_p%04d.json", safeName(label), page)
}

package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	gojson "github.com/goccy/go-json"
)

// RetryPolicy says how often and how long a request is retried. The zero
// value means the defaults (5 attempts, 500ms base, 30s cap); otherwise the
// fields are used as given, so tests can set zero delays.
type RetryPolicy struct {
	MaxAttempts int           // attempts in all, including the first
	BaseDelay   time.Duration // bound of the first wait; doubles on each retry
	MaxDelay    time.Duration // cap of every wait, Retry-After included
}

// Default retry policy: jittered waits of at most 0.5s, 1s, 2s, 4s.
const (
	defaultAttempts  = 5
	defaultBaseDelay = 500 * time.Millisecond
	defaultMaxDelay  = 30 * time.Second
)

// delay is the wait before retry n (1-based): full jitter over
// BaseDelay·2^(n-1), raised to retryAfter, capped at MaxDelay.
func (p RetryPolicy) delay(n int, retryAfter time.Duration) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	if d > 0 {
		d = rand.N(d + 1)
	}
	return min(max(d, retryAfter), p.MaxDelay)
}

// retryAfter parses a Retry-After header: delay seconds or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil {
		return max(time.Duration(s)*time.Second, 0)
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// do sends req and hands a 2xx response to handle, which may read the body
// (do closes it). This is the one retry loop: retryable failures (IsRetryable)
// of the request or of handle are retried with backoff, never after ctx ends;
// a Retry-After header (of the service or of the token endpoint) is honoured.
// An attempt whose response headers take longer than lim.headers fails with
// ErrNoHeaders, and is retried; so is a body that gives no byte for
// Config.BodyIdleTimeout (ErrStalled). A body past lim.maxBody fails with
// ErrBodyTooLarge. A POST is retried only after a failure that proves it was
// not applied (see applied): do never re-posts blindly (doPost looks first).
func (c *Client) do(ctx context.Context, op string, req *http.Request, lim limits, handle func(*http.Response) error) error {
	return c.doPost(ctx, op, req, lim, handle, nil)
}

// doPost is do with, for a POST, lookup: after a failure that may have left
// the POST applied (a reset connection, a 502 or 504, late headers), and
// before sending it again, lookup looks for what it made; when lookup finds
// it (and keeps it), doPost returns nil without re-posting. Without lookup
// such a POST is not retried.
func (c *Client) doPost(ctx context.Context, op string, req *http.Request, lim limits, handle func(*http.Response) error,
	lookup func(context.Context) (bool, error)) error {
	for n := 1; ; n++ {
		err := c.attempt(ctx, req, lim, handle)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || n >= c.cfg.Retry.MaxAttempts || !IsRetryable(err) {
			return fmt.Errorf("%s: %w", op, err)
		}
		maybe := req.Method == http.MethodPost && mayBeApplied(err)
		if maybe && lookup == nil {
			return fmt.Errorf("%s: %w (not sent again: the POST may have been applied)", op, err)
		}
		var wait time.Duration
		if ae, ok := errors.AsType[*APIError](err); ok {
			wait = ae.RetryAfter
		}
		d := c.cfg.Retry.delay(n, wait)
		c.log.Warn("retrying", "op", op, "attempt", n, "delay", d, "err", err)
		if werr := c.wait(ctx, d); werr != nil {
			return fmt.Errorf("%s: %w (last error: %v)", op, werr, err)
		}
		if maybe {
			found, lerr := lookup(ctx)
			if lerr != nil {
				return fmt.Errorf("%s: %w (and looking for what it may have made failed: %v)", op, err, lerr)
			}
			if found {
				c.log.Warn("POST was applied although its answer was lost: reusing what it made", "op", op, "err", err)
				return nil
			}
		}
	}
}

// mayBeApplied reports whether a retryable failure of a POST may come after
// the service applied it: any but a 429 or 503 answer (refused before any
// work) and a connection that was never made.
func mayBeApplied(err error) bool {
	if ae, ok := errors.AsType[*APIError](err); ok {
		return ae.Status != http.StatusTooManyRequests && ae.Status != http.StatusServiceUnavailable
	}
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "dial" {
		return false
	}
	return true
}

// attempt makes one try of req, waiting at most lim.headers for the
// response's headers; handle reads the body through guard.
func (c *Client) attempt(ctx context.Context, req *http.Request, lim limits, handle func(*http.Response) error) error {
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := req.Clone(rctx)
	if req.GetBody != nil {
		body, err := req.GetBody() // rewind
		if err != nil {
			return err
		}
		r.Body = body
	}
	start := time.Now()
	late := time.AfterFunc(lim.headers, func() { cancel(ErrNoHeaders) })
	resp, err := c.http.Do(r)
	if !late.Stop() && ctx.Err() == nil { // the wait ran out, whether or not the headers came just then
		if err == nil {
			resp.Body.Close()
		}
		return fmt.Errorf("%s %s: %w after %s", r.Method, c.redact(r.URL), ErrNoHeaders, lim.headers)
	}
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			ue.URL = c.redact(r.URL) // the URL as logged: no signed query of a foreign host
		}
		return err
	}
	resp.Body = guard(resp.Body, c.cfg.BodyIdleTimeout, func() { cancel(ErrStalled) }, lim.maxBody) // error bodies too
	defer resp.Body.Close()
	c.log.Debug("http", "method", r.Method, "url", c.redact(r.URL), "status", resp.StatusCode, "elapsed", time.Since(start))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return newAPIError(resp)
	}
	if lim.maxBody > 0 && resp.ContentLength > lim.maxBody {
		return fmt.Errorf("%s %s: %w: Content-Length %d is over the cap of %d bytes (RECON_MAX_BODY)",
			r.Method, c.redact(r.URL), ErrBodyTooLarge, resp.ContentLength, lim.maxBody)
	}
	return handle(resp)
}

// jsonRequest builds a request that sends in (if not nil) as JSON and asks for JSON.
func jsonRequest(ctx context.Context, method, u string, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b) // gives the request a GetBody, so it can be rewound
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// decodeInto is a handler of do that decodes a JSON answer into out.
func decodeInto(out any) func(*http.Response) error {
	return func(resp *http.Response) error {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("decode response: %w", err)
		}
		return nil
	}
}

// doJSON sends in (if not nil) as JSON and decodes a 2xx answer into out.
func (c *Client) doJSON(ctx context.Context, op, method, u string, in, out any) error {
	req, err := jsonRequest(ctx, method, u, in)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return c.do(ctx, op, req, c.apiCall(), decodeInto(out))
}

// getRaw GETs u (a JSON resource) and returns its body and headers.
func (c *Client) getRaw(ctx context.Context, op, u string) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	var body []byte
	var header http.Header
	err = c.do(ctx, op, req, c.apiCall(), func(resp *http.Response) (err error) {
		header = resp.Header
		body, err = io.ReadAll(resp.Body)
		return err
	})
	return body, header, err
}

// decodeJSON decodes a response body with goccy/go-json, which needs a
// fraction of encoding/json's CPU on the millions of items of a large run,
// and again with encoding/json when that fails, for its clearer error.
func decodeJSON(body []byte, v any) error {
	if gojson.Unmarshal(body, v) == nil {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	return json.Unmarshal(body, v)
}

// origin is scheme://host:port with the default port filled in.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// redact gives u for logs, errors and provenance: URLs of the services as they
// are, other hosts (signed download links) without user info and query.
func (c *Client) redact(u *url.URL) string {
	if c.auth.bound(u) {
		return u.String()
	}
	r := *u
	r.User, r.RawQuery, r.ForceQuery, r.Fragment = nil, "", false, ""
	return r.String()
}

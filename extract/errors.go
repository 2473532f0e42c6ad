package extract

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// APIError is a non-2xx answer of a provider service or of the token endpoint.
type APIError struct {
	Status    int    // HTTP status
	Code      string // errorCode (reporting), ripplenet_error_code (server API) or error (token)
	Title     string // title
	Detail    string // detail or error_description; the start of the body when it is not JSON
	RequestID string // correlationId, else the X-Request-Id or X-Correlation-Id header
	// RetryAfter is the wait the Retry-After header asks for (0 without one).
	RetryAfter time.Duration
}

// Error formats the error as "code: title: detail (HTTP status, request id)".
func (e *APIError) Error() string {
	var parts []string
	for _, s := range []string{e.Code, e.Title, e.Detail} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	msg := cmp.Or(strings.Join(parts, ": "), http.StatusText(e.Status))
	if e.RequestID != "" {
		return fmt.Sprintf("%s (HTTP %d, request %s)", msg, e.Status, e.RequestID)
	}
	return fmt.Sprintf("%s (HTTP %d)", msg, e.Status)
}

// Sentinel errors, always wrapped.
var (
	// ErrTruncated is returned by DownloadReport when a body ends early; it is retried.
	ErrTruncated = errors.New("truncated download")
	// ErrNoHeaders is returned when a response's headers do not come in time
	// (HeaderTimeout, or DownloadHeaderTimeout for a report download); it is retried.
	ErrNoHeaders = errors.New("no response headers")
	// ErrRedirect is returned when a POST (the token request, a report's
	// creation) is answered with a redirect: it is not followed, so the body
	// and its credentials never go to another URL; it is not retried.
	ErrRedirect = errors.New("redirect of a POST refused")
	// ErrPollTimeout is returned by WaitReport when a report is still PENDING after Config.PollTimeout.
	ErrPollTimeout = errors.New("report still pending")
)

// IsRetryable reports whether another attempt may succeed: a transport error,
// a truncated or stalled body, or an APIError with status 429, 502, 503 or 504.
// Cancellation, deadlines, refused redirects and the size caps never are.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ErrRedirect) || errors.Is(err, ErrBodyTooLarge) || errors.Is(err, ErrDiskBudget) || errors.Is(err, ErrNameClash) {
		return false
	}
	if ae, ok := errors.AsType[*APIError](err); ok {
		switch ae.Status {
		case http.StatusTooManyRequests, // rate limited: wait (Retry-After) and try again
			http.StatusBadGateway,         // a proxy could not reach the service
			http.StatusServiceUnavailable, // overloaded or restarting
			http.StatusGatewayTimeout:     // a proxy timed out
			return true
		}
		return false // 4xx are our fault, other 5xx are not known to be transient
	}
	_, isNet := errors.AsType[net.Error](err) // includes *url.Error from http.Client.Do
	return isNet || errors.Is(err, ErrTruncated) || errors.Is(err, ErrNoHeaders) || errors.Is(err, ErrStalled) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// newAPIError reads resp's body through ErrorBodyLimitBytes and parses any of
// the four error shapes (DESIGN.md §3).
func newAPIError(resp *http.Response) *APIError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, ErrorBodyLimitBytes))
	e := &APIError{
		Status:     resp.StatusCode,
		RequestID:  cmp.Or(resp.Header.Get("X-Request-Id"), resp.Header.Get("X-Correlation-Id")),
		RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now()),
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		e.Detail = snippet(body)
		return e
	}
	e.Code = cmp.Or(field(m, "errorCode"), field(m, "ripplenet_error_code"), field(m, "error"))
	e.Title = field(m, "title")
	e.Detail = cmp.Or(field(m, "detail"), field(m, "error_description"))
	e.RequestID = cmp.Or(field(m, "correlationId"), e.RequestID)
	return e
}

func field(m map[string]any, key string) string {
	switch v := m[key].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// snippet is the start of a non-JSON error body (an HTML page from a proxy, say).
func snippet(b []byte) string {
	const n = 200
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "?")), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

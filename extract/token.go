package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// tokenSource fetches the client-credentials token and caches it until
// expires_in minus a skew. Concurrent callers share one fetch. A 400, 401 or
// 403 from the token endpoint is kept and returned to every later caller, so
// bad credentials cost one request.
type tokenSource struct {
	url, clientID, audience string
	secret                  Secret
	basic                   bool
	http                    *http.Client // without the auth transport; refuses redirects
	maxBody                 int64        // cap of the answer
	now                     func() time.Time
	log                     *slog.Logger

	mu       sync.Mutex
	tok      string
	renewAt  time.Time     // tok is used before this instant only
	fatal    error         // sticky token endpoint rejection
	inflight chan struct{} // closed when the running fetch ends
}

// token returns a fresh token that differs from stale ("" for any).
func (s *tokenSource) token(ctx context.Context, stale string) (string, error) {
	for {
		s.mu.Lock()
		if s.fatal != nil {
			s.mu.Unlock()
			return "", s.fatal
		}
		if s.tok != "" && s.tok != stale && s.now().Before(s.renewAt) {
			tok := s.tok
			s.mu.Unlock()
			return tok, nil
		}
		if ch := s.inflight; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch: // look again: the fetch has stored a token or an error, or failed transiently
				continue
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		ch := make(chan struct{})
		s.inflight = ch
		s.mu.Unlock()

		tok, renewAt, err := s.fetch(ctx)
		s.mu.Lock()
		s.inflight = nil
		if err == nil {
			s.tok, s.renewAt = tok, renewAt
		} else if ae, ok := errors.AsType[*APIError](err); ok && slices.Contains([]int{400, 401, 403}, ae.Status) {
			s.fatal = err
		}
		s.mu.Unlock()
		close(ch)
		return tok, err
	}
}

// fetch makes one token request. Its errors never hold the secret or the token.
func (s *tokenSource) fetch(ctx context.Context) (string, time.Time, error) {
	body := map[string]string{"audience": s.audience, "grant_type": "client_credentials"}
	if !s.basic {
		body["client_id"], body["client_secret"] = s.clientID, s.secret.Reveal()
	}
	b, err := json.Marshal(body)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("token: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(b))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("token: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if s.basic {
		req.SetBasicAuth(s.clientID, s.secret.Reveal())
	}
	start := s.now()
	resp, err := s.http.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			ue.URL = s.url // not a redirect's target
		}
		return "", time.Time{}, fmt.Errorf("token: %w", err)
	}
	defer resp.Body.Close()
	resp.Body = guard(resp.Body, 0, nil, s.maxBody) // the client's Timeout bounds the whole answer
	if resp.StatusCode != http.StatusOK {
		return "", time.Time{}, fmt.Errorf("token: %w", newAPIError(resp))
	}
	var r struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return "", time.Time{}, fmt.Errorf("token: decode response: %w", err)
	}
	switch {
	case r.AccessToken == "": // any other length is valid: the spec forbids checking it
		return "", time.Time{}, errors.New("token: response has no access_token")
	case r.TokenType != "" && !strings.EqualFold(r.TokenType, "Bearer"):
		return "", time.Time{}, fmt.Errorf("token: token_type %q, want Bearer", r.TokenType)
	}
	life := time.Duration(r.ExpiresIn) * time.Second
	skew := DefaultTokenSkew
	if life < 2*skew {
		skew = life / 2
	}
	s.log.Debug("token fetched", "expires_in", r.ExpiresIn)
	return r.AccessToken, start.Add(life - skew), nil
}

// authTransport adds the bearer token to requests for the service hosts only,
// and on a 401 from them refreshes the token once and retries once.
type authTransport struct {
	base    http.RoundTripper
	tokens  *tokenSource
	origins []string // of ReportingURL, ServerURL, LiquidationURL, WalletURL
	// wallet (WalletURL + "/") prefixes the URLs whose token comes from
	// walletTokens (Config.WalletAudience); "" when there is no second audience.
	wallet       string
	walletTokens *tokenSource
}

// tokensFor is the token source of a request's URL.
func (t *authTransport) tokensFor(u *url.URL) *tokenSource {
	if t.wallet != "" && strings.HasPrefix(u.String(), t.wallet) {
		return t.walletTokens
	}
	return t.tokens
}

func (t *authTransport) bound(u *url.URL) bool { return slices.Contains(t.origins, origin(u)) }

// RoundTrip implements http.RoundTripper.
func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.bound(req.URL) {
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	tokens := t.tokensFor(req.URL)
	tok, err := tokens.token(ctx, "")
	if err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, even on error
		}
		return nil, err
	}
	resp, err := t.base.RoundTrip(withToken(req, tok, req.Body))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	body := req.Body
	if req.GetBody != nil {
		if body, err = req.GetBody(); err != nil {
			return resp, nil
		}
	} else if body != nil && body != http.NoBody {
		return resp, nil // cannot replay the body: leave the 401 to the caller
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, ErrorBodyLimitBytes))
	resp.Body.Close()
	if tok, err = tokens.token(ctx, tok); err != nil {
		if body != nil {
			body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(withToken(req, tok, body))
}

func withToken(req *http.Request, tok string, body io.ReadCloser) *http.Request {
	r := req.Clone(req.Context())
	r.Body = body
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}

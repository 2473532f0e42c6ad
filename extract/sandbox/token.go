package sandbox

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// scope is what every sandbox token grants.
const scope = "ledger:balance:read ledger:statement:read pos:payments:read reporting:reports:read reporting:reports:write liquidation:liquidations:read"

// issueToken is the OAuth 2.0 client-credentials token endpoint. The spec's
// body is JSON; a form body (what OAuth libraries send) is accepted too.
func (s *Sandbox) issueToken(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Audience     string `json:"audience"`
		GrantType    string `json:"grant_type"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && ct == "application/x-www-form-urlencoded" {
		var form url.Values
		if form, err = url.ParseQuery(string(body)); err == nil {
			req.ClientID, req.ClientSecret = form.Get("client_id"), form.Get("client_secret")
			req.Audience, req.GrantType = form.Get("audience"), form.Get("grant_type")
		}
	} else if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if id, secret, ok := r.BasicAuth(); ok {
		req.ClientID, req.ClientSecret = id, secret
	}
	fail := func(status int, code, desc string) {
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
	}
	switch {
	case err != nil:
		fail(http.StatusBadRequest, "invalid_request", "request body must be a JSON token request")
	case req.GrantType != "client_credentials":
		fail(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be client_credentials")
	case !same(req.ClientID, s.cfg.ClientID) || !same(req.ClientSecret, s.cfg.ClientSecret):
		fail(http.StatusUnauthorized, "access_denied", "Unauthorized")
	case req.Audience != s.cfg.Audience && (s.cfg.WalletAudience == "" || req.Audience != s.cfg.WalletAudience):
		fail(http.StatusBadRequest, "invalid_request", "unknown audience")
	default:
		now := s.now()
		s.tokens.mu.Lock()
		for t, is := range s.tokens.byToken {
			if !now.Before(is.expires) {
				delete(s.tokens.byToken, t)
			}
		}
		s.tokens.seq++
		rng := s.rng(tagToken, s.tokens.seq, 0)
		raw := make([]byte, 32+rng.IntN(33)) // the length varies, as the provider's does
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		tok := base64.RawURLEncoding.EncodeToString(raw)
		s.tokens.byToken[tok] = &issued{expires: now.Add(s.cfg.TokenTTL), seq: s.tokens.seq, audience: req.Audience}
		s.tokens.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusOK, map[string]any{
			"access_token": tok, "scope": scope,
			"expires_in": int64(s.cfg.TokenTTL.Seconds()), "token_type": "Bearer",
		})
	}
}

func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// tokenState is the token service's: the tokens it issued.
type tokenState struct {
	mu        sync.Mutex
	byToken   map[string]*issued
	seq       uint64            // tokens issued so far
	expiredOn map[string]uint64 // request key -> the token refused there as expired (Faults.TokenUses)
}

// issued is what the sandbox keeps of a token it issued.
type issued struct {
	expires  time.Time
	seq      uint64 // tokens are numbered in issue order
	uses     int
	audience string
}

// tokenAudience is the audience of the request's bearer token ("" if unknown).
func (s *Sandbox) tokenAudience(r *http.Request) string {
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	if is, ok := s.tokens.byToken[tok]; ok {
		return is.audience
	}
	return ""
}

// authed lets a request through only with a known, unexpired bearer token;
// deny writes the service's 401 body. With Faults.TokenUses a token expires
// after that many requests, whatever its expires_in said: expiry mid-run.
// A request refused so, and sent again with a newer token, is served: a
// fresh token lasts long in reality, so a client that renews it after a 401
// never meets a second one however busy the other requests keep it.
func (s *Sandbox) authed(deny func(http.ResponseWriter, string), h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		key := requestKey(r)
		now := s.now()
		s.tokens.mu.Lock()
		is, known := s.tokens.byToken[tok]
		valid := known && strings.EqualFold(scheme, "Bearer") && now.Before(is.expires)
		if valid && s.cfg.Faults.TokenUses > 0 {
			is.uses++
			if refused, again := s.tokens.expiredOn[key]; again && is.seq > refused {
				delete(s.tokens.expiredOn, key)
			} else if is.uses > s.cfg.Faults.TokenUses { // every later use is refused too
				valid = false
				s.tokens.expiredOn[key] = is.seq
				s.faults.add(faultTokenExpiry, 1)
			}
		}
		s.tokens.mu.Unlock()
		if valid {
			h(w, r)
			return
		}
		detail := "a valid bearer token is required"
		if known {
			detail = "the bearer token has expired"
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		deny(w, detail)
	}
}

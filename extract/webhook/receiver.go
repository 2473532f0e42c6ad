package webhook

import (
	"bytes"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/google/uuid"
)

// MaxBody is the largest delivery body accepted (413 above).
const MaxBody = 4 << 10

// PathPrefix is the path of deliveries, followed by the token.
const PathPrefix = "/webhook/"

// MinTokenLen is the shortest path token accepted.
const MinTokenLen = 16

// ErrConfig is wrapped by New's errors about its configuration (not the spool's).
var ErrConfig = errors.New("webhook configuration")

// DefaultAllow is the allow-list when none is configured: loopback only.
var DefaultAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// Config configures a Receiver.
type Config struct {
	Spool string // the spool file
	// Token is the secret path token (extract.Secret). It is an interface so
	// that this package does not import extract, whose source reads the spool.
	Token  interface{ Reveal() string }
	Allow  []netip.Prefix // source addresses served; others get 403
	Logger *slog.Logger
	Now    func() time.Time // clock of the receipt times (default time.Now; tests and the sandbox demo set it)
}

// Receiver answers webhook deliveries: it spools each msg_id and answers
// 200 once the spool is fsync'd.
type Receiver struct {
	spool *Spool
	path  []byte // PathPrefix + token
	allow []netip.Prefix
	log   *slog.Logger
	now   func() time.Time
}

// New checks cfg and opens the spool.
func New(cfg Config) (*Receiver, error) {
	if cfg.Token == nil || len(cfg.Token.Reveal()) < MinTokenLen {
		return nil, fmt.Errorf("%w: RECON_WEBHOOK_TOKEN: want at least %d characters (for example: openssl rand -hex 32)", ErrConfig, MinTokenLen)
	}
	if strings.Trim(cfg.Token.Reveal(), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") != "" {
		return nil, fmt.Errorf("%w: RECON_WEBHOOK_TOKEN: want only letters, digits and - . _ ~ (it is a URL path segment)", ErrConfig)
	}
	if len(cfg.Allow) == 0 {
		cfg.Allow = DefaultAllow
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s, err := OpenSpool(cfg.Spool)
	if err != nil {
		return nil, err
	}
	return &Receiver{spool: s, path: []byte(PathPrefix + cfg.Token.Reveal()), allow: cfg.Allow, log: cfg.Logger, now: cfg.Now}, nil
}

// Close closes the spool once the appends handed over are written.
func (rc *Receiver) Close() error { return rc.spool.Close() }

// ParseMsgID returns the canonical (lower-case, hyphenated) form of a
// msg_id; ok is false unless s is a UUID in its 36-character form.
func ParseMsgID(s string) (id string, ok bool) {
	if len(s) != 36 {
		return "", false
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// ServeHTTP handles one delivery. The checks run in this order, each
// answering before anything is read or written: source address (403),
// path token (404), method (405), body size (413), body shape (400).
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	remote := remoteAddr(r)
	status, msgID, err := rc.deliver(r, remote, rc.now())
	if status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", http.MethodPost)
	}
	http.Error(w, http.StatusText(status), status)
	level, attrs := slog.LevelInfo, []slog.Attr{
		slog.String("msg_id", msgID), slog.Int("status", status),
		slog.String("remote", remote.String()), slog.Duration("duration", time.Since(start)),
	}
	if err != nil {
		level, attrs = slog.LevelWarn, append(attrs, slog.String("error", err.Error()))
		if status >= 500 {
			level = slog.LevelError
		}
	}
	rc.log.LogAttrs(r.Context(), level, "webhook delivery", attrs...)
}

// deliver checks a delivery and spools it; it returns the status to answer.
func (rc *Receiver) deliver(r *http.Request, remote netip.Addr, at time.Time) (int, string, error) {
	if !rc.allowed(remote) {
		return http.StatusForbidden, "", errors.New("source address not in RECON_WEBHOOK_ALLOW")
	}
	if subtle.ConstantTimeCompare([]byte(r.URL.Path), rc.path) != 1 {
		return http.StatusNotFound, "", errors.New("wrong path") // the path holds the token: never logged
	}
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, "", fmt.Errorf("method %s", r.Method)
	}
	if r.ContentLength > MaxBody {
		return http.StatusRequestEntityTooLarge, "", fmt.Errorf("body of %d bytes", r.ContentLength)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return http.StatusBadRequest, "", fmt.Errorf("read body: %w", err)
	}
	if len(body) > MaxBody {
		return http.StatusRequestEntityTooLarge, "", errors.New("body over 4 KiB")
	}
	id, err := parseBody(body)
	if err != nil {
		return http.StatusBadRequest, "", err
	}
	rec := Record{MsgID: id, ReceivedAt: at.UTC().Format(time.RFC3339Nano), Remote: remote.String()}
	if err := rc.spool.Append(r.Context(), rec); err != nil {
		return http.StatusServiceUnavailable, id, err
	}
	return http.StatusOK, id, nil
}

// parseBody accepts one JSON object whose msg_id is a UUID. Other fields
// are ignored (the spec shows only msg_id; refusing a field the provider
// adds later would lose notifications after its 12 retries).
func parseBody(body []byte) (string, error) {
	var b struct {
		MsgID *string `json:"msg_id"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&b); err != nil {
		return "", errors.New("body is not a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", errors.New("body has data after the JSON object")
	}
	if b.MsgID == nil {
		return "", errors.New("body has no msg_id string")
	}
	id, ok := ParseMsgID(*b.MsgID)
	if !ok {
		return "", errors.New("msg_id is not a UUID")
	}
	return id, nil
}

func (rc *Receiver) allowed(a netip.Addr) bool {
	for _, p := range rc.allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// remoteAddr is the peer's address (never a forwarding header), IPv4-mapped
// addresses unmapped; the zero Addr if it cannot be parsed.
func remoteAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// ShutdownTimeout bounds how long Serve waits for deliveries in flight
// once ctx ends.
const ShutdownTimeout = 30 * time.Second

// Serve serves deliveries on ln (over TLS when certFile and keyFile are
// set) until ctx ends, then stops accepting, lets the deliveries in flight
// finish (their fsync included) and closes the spool.
func (rc *Receiver) Serve(ctx context.Context, ln net.Listener, certFile, keyFile string) error {
	defer rc.Close()
	srv := &http.Server{
		Handler:           rc,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(rc.log.Handler(), slog.LevelWarn),
	}
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("TLS certificate: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve webhooks: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("stop webhook receiver: %w", err)
	}
	return nil
}

package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// setupLog builds the process logger from the log settings: text on a
// terminal and JSON otherwise (format auto). A bad value falls back to the
// default here and is reported by the configuration check of the command.
func (a *app) setupLog(cmd *cobra.Command) {
	format := strings.ToLower(a.lookup(cmd.Flags(), settingNamed("log_format")).val)
	level, err := parseLevel(a.lookup(cmd.Flags(), settingNamed("log_level")).val)
	if err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: redact}
	if format == "text" || (format != "json" && a.tty) {
		a.log = slog.New(slog.NewTextHandler(a.logOut, opts))
	} else {
		a.log = slog.New(slog.NewJSONHandler(a.logOut, opts))
	}
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return l, fmt.Errorf("log level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// secretKeys are attribute keys whose values never reach a log line,
// whatever code logs them: a net under extract.Secret and the token transport.
var secretKeys = map[string]bool{"secret": true, "client_secret": true, "token": true, "access_token": true,
	"bearer": true, "authorization": true, "password": true}

func redact(_ []string, a slog.Attr) slog.Attr {
	if secretKeys[strings.ToLower(a.Key)] {
		return slog.String(a.Key, "[redacted]")
	}
	return a
}

// logWriter is where log lines go: stderr, or, while progress bars show,
// the bar container, which prints them above the bars.
type logWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *logWriter) set(w io.Writer) {
	l.mu.Lock()
	l.w = w
	l.mu.Unlock()
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

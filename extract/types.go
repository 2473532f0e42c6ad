// Package extract pulls the network's reports, statements and other sources
// over HTTP into a folder of raw files, each with its sha256 and provenance.
package extract

import "log/slog"

// Secret is a credential that prints as [redacted] in every format and log.
type Secret string

// String returns [redacted]; use Reveal for the value.
func (Secret) String() string { return "[redacted]" }

// GoString returns [redacted].
func (Secret) GoString() string { return "[redacted]" }

// LogValue keeps the secret out of slog output.
func (Secret) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// MarshalText keeps the secret out of JSON and other encodings.
func (Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// Reveal returns the secret's value, for the one place that sends it.
func (s Secret) Reveal() string { return string(s) }

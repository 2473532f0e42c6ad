package transform

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"recon/extract/raw"
)

// ErrUnreadable is wrapped by the error of a load whose raw file cannot be
// parsed at all (a CSV without a header the table knows, a page that is not
// JSON, a document truncated beyond its first rows): the file, not the
// database or the disk, is at fault. Load does not return it: it skips the
// file's slice and lists it in Stats.Unreadable (see UnreadableError).
var ErrUnreadable = errors.New("raw file cannot be read")

// UnreadableError is a raw file that cannot be parsed at all, and why.
type UnreadableError struct {
	File   string // the raw file's path in its folder
	Reason error
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("%s cannot be read: %v", e.File, e.Reason)
}

// Is makes errors.Is(err, ErrUnreadable) true.
func (e *UnreadableError) Is(target error) bool { return target == ErrUnreadable }

func (e *UnreadableError) Unwrap() error { return e.Reason }

// unreadable wraps the parse error of a whole file. Errors that are not the
// file's fault stay as they are: nil, a failed read of the disk, a stop
// (the context, or DuckDB no longer reading the stage).
func unreadable(file string, err error) error {
	var pe *fs.PathError
	if err == nil || errors.Is(err, ErrUnreadable) || errors.As(err, &pe) || errors.Is(err, errStopped) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &UnreadableError{File: file, Reason: err}
}

// Unreadable is a slice Load skipped because one of its files cannot be
// read: its rows from earlier runs stay, none of its files is recorded, and
// the run treats its files as a source that FAILED (pipeline gaps).
type Unreadable struct {
	File   string     // the file that cannot be read
	Reason string     // why, without the file's name
	Slice  []raw.File // every file of its slice, none loaded
}

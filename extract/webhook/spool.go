// Package webhook is the receiving side of the server API's notifications
// (DESIGN §10): an HTTP receiver that appends each delivered msg_id to a
// spool file, fsync'd before it answers 200, and the reader that runs use
// to take the ids spooled since the last published run.
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Record is one line of the spool: one delivery. It holds no secret.
type Record struct {
	MsgID      string `json:"msg_id"`
	ReceivedAt string `json:"received_at"` // RFC 3339 with nanoseconds, UTC
	Remote     string `json:"remote"`      // the source IP address
}

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("spool closed")

// maxBatch bounds the deliveries one write and one fsync carry.
const maxBatch = 4096

// Spool appends records to a JSON Lines file. Appends are serialised by one
// writer goroutine that commits them in groups: every append waiting when
// the previous fsync ends goes into the next write, followed by one fsync,
// after which all of them return.
type Spool struct {
	path string
	f    *os.File
	size int64 // bytes known to be whole lines on disk

	mu     sync.RWMutex // guards closed against sends on a closed reqs
	closed bool
	reqs   chan *pending
	done   chan struct{}
	failed error // set by the writer after a failed fsync: the file's state is unknown
}

type pending struct {
	line []byte
	err  chan error
}

// OpenSpool opens (creating it, mode 0640) the spool at path for appending.
// A last line left incomplete by a crash is ended with a newline, so it
// stays one malformed line that readers skip instead of swallowing the
// next record; such a line was never acknowledged.
func OpenSpool(path string) (*Spool, error) {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open spool: %w", err)
	}
	s := &Spool{path: path, f: f, reqs: make(chan *pending, maxBatch), done: make(chan struct{})}
	if err := s.repair(errors.Is(statErr, os.ErrNotExist)); err != nil {
		f.Close()
		return nil, fmt.Errorf("open spool %s: %w", path, err)
	}
	go s.run()
	return s, nil
}

// repair ends a torn last line and makes a new file's name durable.
func (s *Spool) repair(created bool) error {
	fi, err := s.f.Stat()
	if err != nil {
		return err
	}
	s.size = fi.Size()
	if s.size > 0 {
		last := make([]byte, 1)
		if _, err := s.f.ReadAt(last, s.size-1); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read last byte: %w", err)
		}
		if last[0] != '\n' {
			if _, err := s.f.Write([]byte{'\n'}); err != nil {
				return fmt.Errorf("end torn line: %w", err)
			}
			s.size++
		}
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	if created {
		return syncDir(filepath.Dir(s.path))
	}
	return nil
}

// Append writes rec to the spool and returns once it is on disk (fsync'd).
// It waits for the write even if ctx ends after the record was handed over,
// so that its answer is always the truth.
func (s *Spool) Append(ctx context.Context, rec Record) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("append %s: %w", rec.MsgID, err)
	}
	p := &pending{line: append(line, '\n'), err: make(chan error, 1)}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	select {
	case s.reqs <- p:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	if err := <-p.err; err != nil {
		return fmt.Errorf("append %s: %w", rec.MsgID, err)
	}
	return nil
}

// Close writes the appends already handed over, then closes the file.
func (s *Spool) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.reqs)
	s.mu.Unlock()
	<-s.done
	return s.f.Close()
}

// run is the writer: one batch of waiting appends, one write, one fsync.
func (s *Spool) run() {
	defer close(s.done)
	batch := make([]*pending, 0, maxBatch)
	var buf []byte
	for first := range s.reqs {
		batch = append(batch[:0], first)
	gather:
		for len(batch) < maxBatch {
			select {
			case p, ok := <-s.reqs:
				if !ok {
					break gather
				}
				batch = append(batch, p)
			default:
				break gather
			}
		}
		buf = buf[:0]
		for _, p := range batch {
			buf = append(buf, p.line...)
		}
		err := s.commit(buf)
		for _, p := range batch {
			p.err <- err
		}
	}
}

// commit writes buf and fsyncs it. A failed write is cut back to the last
// whole line; a failed fsync leaves the file's state unknown, so every
// later append fails too (the sender retries; restart the receiver).
func (s *Spool) commit(buf []byte) error {
	if s.failed != nil {
		return s.failed
	}
	n, err := s.f.Write(buf)
	if err != nil {
		if terr := s.f.Truncate(s.size); terr != nil {
			s.failed = fmt.Errorf("spool unusable after a failed write (%v): truncate: %w", err, terr)
		}
		return fmt.Errorf("write: %w", err)
	}
	if err := s.f.Sync(); err != nil {
		s.failed = fmt.Errorf("spool unusable after a failed fsync: %w", err)
		return s.failed
	}
	s.size += int64(n)
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open folder %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync folder %s: %w", dir, err)
	}
	return nil
}

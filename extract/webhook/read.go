package webhook

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Entry is one msg_id of a read, with its deliveries in the range read.
type Entry struct {
	MsgID string
	First time.Time // first receipt in the range
	Last  time.Time // last receipt in the range
	Count int       // deliveries in the range (duplicates included)
}

// Read is what ReadSpool found between two offsets of the spool.
type Read struct {
	Entries   []Entry // in order of first receipt
	From      int64   // offset the read started at (0 after a reset)
	Next      int64   // offset after the last whole line read: pass it to Commit once published
	Lines     int     // whole lines read
	Malformed int     // lines skipped: not a record (a line torn by a crash, or damage)
	Reset     bool    // the spool was shorter than the offset asked (replaced): read from 0
}

// ReadSpool reads the whole lines of the spool at path from byte offset
// from up to its size when the read starts, aggregated per msg_id. It takes
// no lock: the receiver keeps appending, and what it appends after the
// read started is left for the next read (from Next). A last line without
// its newline (being written, or torn by a crash) is not consumed. A
// missing spool reads as empty.
func ReadSpool(path string, from int64) (Read, error) {
	r := Read{From: from, Next: from}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		r.Reset, r.From, r.Next = from > 0, 0, 0
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("read spool: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return r, fmt.Errorf("read spool %s: %w", path, err)
	}
	if from > fi.Size() || from < 0 {
		r.Reset, r.From, r.Next = true, 0, 0
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, r.From, fi.Size()-r.From), 64<<10)
	index := map[string]int{}
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			break // a partial last line (or nothing): left for a later read
		}
		if err != nil {
			return r, fmt.Errorf("read spool %s at %d: %w", path, r.Next, err)
		}
		r.Next += int64(len(line))
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		r.Lines++
		rec, at, ok := parseLine(line)
		if !ok {
			r.Malformed++
			continue
		}
		i, seen := index[rec.MsgID]
		if !seen {
			index[rec.MsgID] = len(r.Entries)
			r.Entries = append(r.Entries, Entry{MsgID: rec.MsgID, First: at, Last: at, Count: 1})
			continue
		}
		e := &r.Entries[i]
		e.Count++
		if at.Before(e.First) {
			e.First = at
		}
		if at.After(e.Last) {
			e.Last = at
		}
	}
	return r, nil
}

func parseLine(line []byte) (Record, time.Time, bool) {
	var rec Record
	if err := json.Unmarshal(line, &rec); err != nil {
		return rec, time.Time{}, false
	}
	id, ok := ParseMsgID(rec.MsgID)
	at, err := time.Parse(time.RFC3339Nano, rec.ReceivedAt)
	if !ok || err != nil {
		return rec, time.Time{}, false
	}
	rec.MsgID = id
	return rec, at.UTC(), true
}

// offsetFile is the sidecar that holds the offset of the last published read.
func offsetFile(spool string) string { return spool + ".offset" }

// Committed returns the offset recorded by the last Commit (0 if none):
// where the next run starts reading.
func Committed(spool string) (int64, error) {
	b, err := os.ReadFile(offsetFile(spool))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read spool offset: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("spool offset %s: %q is not an offset", offsetFile(spool), strings.TrimSpace(string(b)))
	}
	return n, nil
}

// Commit records next (a Read's Next) as consumed, by temporary file,
// fsync and rename. Only a run that published calls it: the ids of a run
// that did not are read again by the next one. The spool itself is never
// truncated here; the receiver alone writes it.
func Commit(spool string, next int64) error {
	name := offsetFile(spool)
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".tmp*")
	if err != nil {
		return fmt.Errorf("commit spool offset %d: %w", next, err)
	}
	defer os.Remove(tmp.Name())
	_, err = fmt.Fprintf(tmp, "%d\n", next)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err == nil {
		err = syncDir(filepath.Dir(name))
	}
	if err != nil {
		return fmt.Errorf("commit spool offset %d: %w", next, err)
	}
	return nil
}

package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// ErrLocked is matched (errors.Is) by the *LockError TryLock returns when
// another process holds the lock.
var ErrLocked = errors.New("locked by another process")

// Holder is the process that holds a lock, as written into the lock file.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// LockError says who holds a lock; Holder is nil when the lock file could not be read.
type LockError struct {
	Path   string
	Holder *Holder
}

func (e *LockError) Error() string {
	if e.Holder == nil {
		return fmt.Sprintf("%s is held by another process (its details are unreadable)", e.Path)
	}
	h := e.Holder
	return fmt.Sprintf("%s is held by pid %d on %s since %s: %s", e.Path, h.PID, h.Host,
		h.Since.UTC().Format(time.RFC3339), h.Command)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockError) Is(target error) bool { return target == ErrLocked }

// Lock is an exclusive advisory file lock (flock), released by Release or
// by the end of the process, whatever the way it ends.
type Lock struct {
	f    *flock.Flock
	path string
}

// TryLock takes the lock at path without waiting and writes the holder into
// the file. When another process holds it, it returns a *LockError naming it.
func TryLock(path, command string, now time.Time) (*Lock, error) {
	f := flock.New(path, flock.SetPermissions(0o644))
	ok, err := f.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, &LockError{Path: path, Holder: readHolder(path)}
	}
	host, _ := os.Hostname()
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Command: command, Since: now.UTC()})
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		f.Unlock()
		return nil, fmt.Errorf("lock %s: write holder: %w", path, err)
	}
	return &Lock{f: f, path: path}, nil
}

func readHolder(path string) *Holder {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var h Holder
	if json.Unmarshal(b, &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}

// Release empties the lock file and unlocks it. The file stays: removing a
// lock file races with the next process that opens it.
func (l *Lock) Release() error {
	terr := os.Truncate(l.path, 0)
	if err := l.f.Unlock(); err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	if terr != nil {
		return fmt.Errorf("unlock %s: %w", l.path, terr)
	}
	return nil
}

// WriterLockPath is the lock a run holds while it prepares and publishes db.
func WriterLockPath(db string) string { return db + ".lock" }

// SchedulerLockPath is the lock a running `recon schedule` holds for its lifetime.
func SchedulerLockPath(db string) string { return db + ".schedule.lock" }

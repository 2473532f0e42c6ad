package webhook_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"recon/extract/webhook"
)

func line(id string, at time.Time) string {
	return `{"msg_id":"` + id + `","received_at":"` + at.UTC().Format(time.RFC3339Nano) + `","remote":"127.0.0.1"}` + "\n"
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o640); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string, from int64) webhook.Read {
	t.Helper()
	r, err := webhook.ReadSpool(path, from)
	if err != nil {
		t.Fatalf("read from %d: %v", from, err)
	}
	return r
}

// TestReadTornLastLine: a partial last line is not consumed, and is read
// once whole.
func TestReadTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	a, b, c := uuid.NewString(), uuid.NewString(), uuid.NewString()
	now := time.Now()
	whole := line(a, now) + line(b, now)
	last := line(c, now)
	writeFile(t, path, whole+last[:20])
	r := read(t, path, 0)
	if len(r.Entries) != 2 || r.Next != int64(len(whole)) || r.Malformed != 0 {
		t.Fatalf("read %+v, want a and b up to offset %d", r, len(whole))
	}
	appendFile(t, path, last[20:])
	r = read(t, path, r.Next)
	if len(r.Entries) != 1 || r.Entries[0].MsgID != c || r.Next != int64(len(whole+last)) {
		t.Fatalf("read %+v, want c alone", r)
	}
}

// TestOpenSpoolEndsTornLine: after a crash left a partial line, the next
// record is not glued to it (which would lose it).
func TestOpenSpoolEndsTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	a, b := uuid.NewString(), uuid.NewString()
	writeFile(t, path, line(a, time.Now())+`{"msg_id":"`+uuid.NewString()[:10])
	s, err := webhook.OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(t.Context(), webhook.Record{MsgID: b, ReceivedAt: time.Now().UTC().Format(time.RFC3339Nano), Remote: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := read(t, path, 0)
	if len(r.Entries) != 2 || r.Entries[1].MsgID != b || r.Malformed != 1 {
		t.Fatalf("read %+v, want a and b and one malformed line", r)
	}
}

func TestReadSkipsMalformedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	a := uuid.NewString()
	now := time.Now()
	writeFile(t, path, "garbage\n\n"+`{"msg_id":"PAY-1","received_at":"`+now.Format(time.RFC3339Nano)+`"}`+"\n"+
		`{"msg_id":"`+a+`","received_at":"yesterday"}`+"\n"+line(a, now))
	r := read(t, path, 0)
	if len(r.Entries) != 1 || r.Entries[0].Count != 1 || r.Malformed != 3 || r.Lines != 4 {
		t.Fatalf("read %+v, want one entry, 3 malformed of 4 lines", r)
	}
}

func TestReadMissingSpool(t *testing.T) {
	r := read(t, filepath.Join(t.TempDir(), "none"), 0)
	if len(r.Entries) != 0 || r.Next != 0 || r.Reset {
		t.Fatalf("read %+v, want empty", r)
	}
}

// TestCommitOffsets: a run reads from the committed offset, and only a
// commit moves it; a spool shorter than the offset (replaced) is read from 0.
func TestCommitOffsets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	if off, err := webhook.Committed(path); err != nil || off != 0 {
		t.Fatalf("Committed = %d, %v; want 0", off, err)
	}
	a, b := uuid.NewString(), uuid.NewString()
	writeFile(t, path, line(a, time.Now()))
	first := read(t, path, 0)
	appendFile(t, path, line(b, time.Now()))
	// A run that did not publish commits nothing: the next reads a again.
	if r := read(t, path, 0); len(r.Entries) != 2 {
		t.Fatalf("read %+v, want a and b", r)
	}
	if err := webhook.Commit(path, first.Next); err != nil {
		t.Fatal(err)
	}
	off, err := webhook.Committed(path)
	if err != nil || off != first.Next {
		t.Fatalf("Committed = %d, %v; want %d", off, err, first.Next)
	}
	if r := read(t, path, off); len(r.Entries) != 1 || r.Entries[0].MsgID != b {
		t.Fatalf("read %+v, want b alone", r)
	}
	writeFile(t, path, "")
	if r := read(t, path, off); !r.Reset || r.Next != 0 {
		t.Fatalf("read %+v of a replaced spool, want a reset to 0", r)
	}
}

// TestReadWhileAppending: ids appended while runs read are all returned by
// one read or the next, each exactly once.
func TestReadWhileAppending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	s, err := webhook.OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	want := map[string]bool{}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uuid.NewString()
		want[ids[i]] = true
	}
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for i := w; i < n; i += 32 {
				rec := webhook.Record{MsgID: ids[i], ReceivedAt: time.Now().UTC().Format(time.RFC3339Nano), Remote: "127.0.0.1"}
				if err := s.Append(t.Context(), rec); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	got := map[string]int{}
	var next int64
	reads := 0
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true // one more read after the last append
		default:
		}
		r := read(t, path, next)
		for _, e := range r.Entries {
			got[e.MsgID] += e.Count
		}
		next = r.Next
		reads++
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for id := range want {
		if got[id] != 1 {
			t.Errorf("id %s read %d times, want once", id, got[id])
		}
	}
	if len(got) != n {
		t.Errorf("%d ids read, want %d", len(got), n)
	}
	t.Logf("%d ids over %d reads", len(got), reads)
}

func TestAppendAfterClose(t *testing.T) {
	s, err := webhook.OpenSpool(filepath.Join(t.TempDir(), "spool"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	err = s.Append(t.Context(), webhook.Record{MsgID: uuid.NewString()})
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("append after close: %v", err)
	}
}

package transform

import (
	"bytes"
	"testing"
	"unsafe"
)

func start(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// TestBufferPoolAllocates: every buffer is as long as asked, zeroed and
// aligned to 64 bytes, the first time and when it is a freed buffer again.
func TestBufferPoolAllocates(t *testing.T) {
	p := &bufferPool{}
	for _, size := range []int{0, 1, 63, 64, 65, 1000, 1 << 17, 1<<17 + 1, 3<<20 + 5} {
		reused := false
		freed := map[uintptr]bool{}
		for range 50 {
			b := p.Allocate(size)
			if len(b) != size {
				t.Fatalf("Allocate(%d): len %d", size, len(b))
			}
			if size > 0 && start(b)%bufferAlign != 0 {
				t.Fatalf("Allocate(%d): start %#x not aligned to %d", size, start(b), bufferAlign)
			}
			if i := bytes.IndexFunc(b, func(r rune) bool { return r != 0 }); i >= 0 {
				t.Fatalf("Allocate(%d): byte %d not zero (reused: %v)", size, i, freed[start(b)])
			}
			reused = reused || freed[start(b)]
			if size > 0 {
				freed[start(b)] = true
				b = b[:cap(b)]
				for i := range b {
					b[i] = 0xff // what the batch held
				}
			}
			p.Free(b)
		}
		if size > 0 && !reused {
			t.Errorf("Allocate(%d): no freed buffer was used again in 50 rounds", size)
		}
	}
}

// TestBufferPoolReallocate: a buffer grown keeps its bytes; one shrunk is
// the same buffer.
func TestBufferPoolReallocate(t *testing.T) {
	p := &bufferPool{}
	b := p.Allocate(100)
	for i := range b {
		b[i] = byte(i)
	}
	small := p.Reallocate(120, b) // within its class (128)
	if start(small) != start(b) || len(small) != 120 {
		t.Fatalf("Reallocate within the class: moved or len %d", len(small))
	}
	big := p.Reallocate(5000, small)
	if len(big) != 5000 || start(big)%bufferAlign != 0 {
		t.Fatalf("Reallocate(5000): len %d, start %#x", len(big), start(big))
	}
	for i := range 100 {
		if big[i] != byte(i) {
			t.Fatalf("byte %d: %d after growing, want %d", i, big[i], i)
		}
	}
	if i := bytes.IndexFunc(big[120:], func(r rune) bool { return r != 0 }); i >= 0 {
		t.Fatalf("byte %d of the grown part not zero", 120+i)
	}
}

// TestBufferPoolLeavesForeignSlices: a slice the pool cannot take for one
// of its classes (capacity not a power of two, or start not aligned) is
// never handed out again.
func TestBufferPoolLeavesForeignSlices(t *testing.T) {
	p := &bufferPool{}
	owned := make([]byte, 4096+bufferAlign)
	misaligned := owned[1 : 1+1024 : 1+1024]
	oddCap := make([]byte, 1000)
	p.Free(misaligned)
	p.Free(oddCap)
	for range 20 {
		for _, size := range []int{1000, 1024} {
			b := p.Allocate(size)
			if start(b) == start(misaligned) || start(b) == start(oddCap) || start(b)%bufferAlign != 0 {
				t.Fatalf("Allocate(%d) handed out a slice it was freed but cannot own", size)
			}
		}
	}
}

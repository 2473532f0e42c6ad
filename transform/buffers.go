package transform

import (
	"math/bits"
	"sync"
	"unsafe"
)

// bufferPool is the Arrow allocator of a report's record batches (allocator): it
// allocates as arrow's GoAllocator does (zeroed Go memory aligned to 64
// bytes), and a buffer freed when its batch is released (by DuckDB, once
// it has read the batch) is kept for the next batch instead of left to
// Go's collector. Batches are built and released one after another, so few
// buffers are live at a time while gigabytes go through them: with every
// batch's buffers new, a 1M-payment day's RECON ingest allocated 5.3 GB and
// the collector ran about 120 times (docs/performance.md).
//
// A buffer is held by its size class, a power of two from 64 bytes: Go's
// allocator aligns such a size to 64 bytes at least, so the buffer starts
// where Arrow wants it, and its capacity gives its class back when freed.
type bufferPool struct {
	classes [maxBufferClass + 1]sync.Pool // of unsafe.Pointer to the buffer's first byte
}

const (
	bufferAlign    = 64
	minBufferClass = 6  // 64 bytes
	maxBufferClass = 28 // 256 MiB; a larger buffer is left to the collector
)

var buffers = &bufferPool{}

// poisonFreed overwrites each buffer freed (set by the package's tests), so
// a batch read after its release shows as wrong values, not as old ones.
var poisonFreed bool

func (p *bufferPool) Allocate(size int) []byte {
	class := max(bits.Len(uint(size-1)), minBufferClass)
	if size == 0 || class > maxBufferClass {
		return unpooled(size)
	}
	if ptr, ok := p.classes[class].Get().(unsafe.Pointer); ok {
		buf := unsafe.Slice((*byte)(ptr), 1<<class)
		clear(buf)
		return buf[:size]
	}
	buf := make([]byte, 1<<class)
	if uintptr(unsafe.Pointer(unsafe.SliceData(buf)))&(bufferAlign-1) != 0 {
		return unpooled(size) // not on Go's allocator as it is
	}
	return buf[:size]
}

// unpooled is a buffer aligned as GoAllocator aligns it.
func unpooled(size int) []byte {
	buf := make([]byte, size+bufferAlign)
	shift := int(-uintptr(unsafe.Pointer(unsafe.SliceData(buf))) & (bufferAlign - 1))
	return buf[shift : shift+size : shift+size]
}

func (p *bufferPool) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free keeps b for a later Allocate of its class. b must come from
// Allocate and no longer be read or written.
func (p *bufferPool) Free(b []byte) {
	c, ptr := cap(b), unsafe.Pointer(unsafe.SliceData(b))
	if c < 1<<minBufferClass || c > 1<<maxBufferClass || c&(c-1) != 0 || uintptr(ptr)&(bufferAlign-1) != 0 {
		return // not a class's buffer: the collector frees it
	}
	if poisonFreed {
		full := unsafe.Slice((*byte)(ptr), c)
		for i := range full {
			full[i] = 0xAA
		}
	}
	p.classes[bits.Len(uint(c-1))].Put(ptr)
}

//go:build linux || darwin || freebsd

package wasm

import (
	"context"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// withMemoryAllocator backs each instance's linear memory with one anonymous mapping of its
// maximum size: growth never copies (a Go guest grows its heap page by page, which is very slow
// when every growth reallocates), untouched pages cost no RAM, and the mapping is returned to the
// OS when the instance closes instead of staying in the Go heap.
func withMemoryAllocator(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(allocateMapped))
}

func allocateMapped(_, max uint64) experimental.LinearMemory {
	if max == 0 {
		max = 65536
	}
	b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
	if err != nil {
		return &sliceMemory{}
	}
	return &mappedMemory{buf: b}
}

type mappedMemory struct{ buf []byte }

func (m *mappedMemory) Reallocate(size uint64) []byte {
	if m.buf == nil || size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size]
}

func (m *mappedMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf = nil
	}
}

// sliceMemory is the fallback when mmap fails: an ordinary growing slice.
type sliceMemory struct{ buf []byte }

func (m *sliceMemory) Reallocate(size uint64) []byte {
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	nb := make([]byte, size, size*2)
	copy(nb, m.buf)
	m.buf = nb
	return m.buf
}

func (m *sliceMemory) Free() { m.buf = nil }

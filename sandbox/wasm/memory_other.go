//go:build !(linux || darwin || freebsd)

package wasm

import "context"

// withMemoryAllocator keeps wazero's default allocator where mmap is unavailable.
func withMemoryAllocator(ctx context.Context) context.Context { return ctx }

package native

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRuntimeFault: the report of a Go runtime that faulted in its own code (under RLIMIT_DATA,
// the garbage collector's span queue) is a fault at the memory cap; a panic's report, a fault in
// no runtime frame, or any other text is not.
func TestRuntimeFault(t *testing.T) {
	for _, tc := range []struct {
		name, stderr string
		want         bool
	}{
		{"the GC's span queue (seen)", "SIGSEGV: segmentation violation\nPC=0x42fd5d m=0 sigcode=1 addr=0x0\n\ngoroutine 0 gp=0x5cee40 m=0 mp=0x5cfc00 [idle]:\nruntime.(*spanQueue).tryDrain(0x400?, 0x0?, 0x0?)\n\truntime/mgcmark_greenteagc.go:520 +0x5d\n", true},
		{"SIGBUS in the runtime", "SIGBUS: bus error\nPC=0x1 m=0\n\ngoroutine 1 gp=0x1 m=0 mp=0x1 [running]:\nruntime.memmove()\n", true},
		{"a nil dereference the code made (a panic)", "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1]\n\ngoroutine 1 [running]:\nforge/artifact.F()\n", false},
		{"a fault in the code's frame", "SIGSEGV: segmentation violation\nPC=0x1 m=0\n\ngoroutine 1 gp=0x1 m=0 mp=0x1 [running]:\nforge/artifact.F()\n", false},
		{"no dump", "SIGSEGV: segmentation violation\nPC=0x1 m=0 sigcode=1 addr=0x0\n", false},
		{"out of memory (CrashError's)", "fatal error: runtime: out of memory\n\ngoroutine 1 [running]:\nruntime.throw()\n", false},
		{"nothing", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, runtimeFault(tc.stderr)) })
	}
}

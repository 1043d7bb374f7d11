package native

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runFilter interprets the classic BPF program p on a seccomp_data of (arch, nr, args) and
// returns its verdict; it knows the instructions buildFilter emits.
func runFilter(t *testing.T, p []insn, arch, nr uint32, args [6]uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[offNr:], nr)
	binary.LittleEndian.PutUint32(data[offArch:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[offArgs+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(p); pc++ {
		in := p[pc]
		switch in.Code {
		case bpfLD | bpfW | bpfABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case bpfRET | bpfK:
			return in.K
		case bpfJMP | bpfJEQ | bpfK, bpfJMP | bpfJGE | bpfK, bpfJMP | bpfJSET | bpfK:
			var yes bool
			switch in.Code &^ (bpfJMP | bpfK) {
			case bpfJEQ:
				yes = acc == in.K
			case bpfJGE:
				yes = acc >= in.K
			case bpfJSET:
				yes = acc&in.K != 0
			}
			if yes {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		default:
			t.Fatalf("instruction %#x at %d", in.Code, pc)
		}
	}
	t.Fatal("fell off the program")
	return 0
}

// TestFilter holds the seccomp filter's verdicts on both architectures: what the runtime needs
// is allowed (with its argument conditions), the rest fails with EPERM, another architecture's
// numbering and amd64's x32 ABI kill.
func TestFilter(t *testing.T) {
	const (
		allow = retAllow
		eperm = retErrno | errnoEPERM
		kill  = retKillProcess
	)
	type call struct {
		name string
		nr   uint32
		args [6]uint64
		want uint32
	}
	for _, s := range []sysnums{amd64Sysnums, arm64Sysnums} {
		t.Run(s.arch, func(t *testing.T) {
			p := buildFilter(s, allowlist(s))
			require.Less(t, len(p), 4096, "BPF_MAXINSNS")
			calls := []call{
				{"read stdin", s.read, [6]uint64{0}, allow},
				{"read the epoll's eventfd", s.read, [6]uint64{5}, allow},
				{"read fd 8", s.read, [6]uint64{8}, eperm},
				{"write stdout", s.write, [6]uint64{1}, allow},
				{"write fd 100", s.write, [6]uint64{100}, eperm},
				{"mmap rw", s.mmap, [6]uint64{0, 4096, 0x3}, allow},
				{"mmap rx", s.mmap, [6]uint64{0, 4096, 0x5}, eperm},
				{"mprotect rx", s.mprotect, [6]uint64{0, 4096, 0x5}, eperm},
				{"mprotect none", s.mprotect, [6]uint64{0, 4096, 0}, allow},
				{"clone a thread", s.clone, [6]uint64{0x50f00}, allow},
				{"fork", s.clone, [6]uint64{17}, eperm},
				{"clone3, even of a thread", 435, [6]uint64{}, eperm},
				{"seccomp again", s.seccomp, [6]uint64{}, eperm},
				{"an unknown number", 999, [6]uint64{}, eperm},
			}
			if s.arch == "amd64" {
				calls = append(calls, call{"fork", 57, [6]uint64{}, eperm}, call{"vfork", 58, [6]uint64{}, eperm})
			}
			for _, nr := range s.always {
				calls = append(calls, call{"always", nr, [6]uint64{}, allow})
			}
			for _, c := range calls {
				assert.Equal(t, c.want, runFilter(t, p, s.auditArch, c.nr, c.args), "%s (nr %d)", c.name, c.nr)
			}
			other := amd64Sysnums.auditArch
			if s.arch == "amd64" {
				other = arm64Sysnums.auditArch
			}
			assert.Equal(t, uint32(kill), runFilter(t, p, other, s.read, [6]uint64{0}), "another architecture")
			if s.x32 {
				assert.Equal(t, uint32(kill), runFilter(t, p, s.auditArch, x32Bit|s.read, [6]uint64{0}), "x32")
			}
		})
	}
}

package native

import (
	"fmt"
	"strings"
)

// The worker's seccomp filter: an allowlist of what the Go runtime needs once it has started
// (sysnum_*.go give the numbers), every other system call fails with EPERM, and a call made
// under another architecture's numbering (or, on amd64, the x32 ABI) kills the process. It is
// built here, as plain data, and written into the guest's lockdown package as a literal.

// BPF and seccomp constants (linux/filter.h, linux/seccomp.h).
const (
	bpfLD   = 0x00
	bpfW    = 0x00
	bpfABS  = 0x20
	bpfJMP  = 0x05
	bpfJEQ  = 0x10
	bpfJGE  = 0x30
	bpfJSET = 0x40
	bpfK    = 0x00
	bpfRET  = 0x06

	retKillProcess = 0x80000000
	retErrno       = 0x00050000
	retAllow       = 0x7fff0000
	errnoEPERM     = 1

	offNr   = 0
	offArch = 4
	offArgs = 16 // args[i] at 16 + 8*i; the low 32 bits first (little-endian)

	protExec    = 0x4
	cloneThread = 0x00010000
	x32Bit      = 0x40000000
)

// insn is one classic BPF instruction (struct sock_filter).
type insn struct {
	Code   uint16
	Jt, Jf uint8
	K      uint32
}

// ruleKind says how a rule checks a system call's argument.
type ruleKind int

const (
	always    ruleKind = iota // allowed whatever its arguments
	maskClear                 // allowed when args[arg] & val == 0 (mmap, mprotect: no PROT_EXEC)
	maskSet                   // allowed when args[arg] & val != 0 (clone: only CLONE_THREAD)
	below                     // allowed when (uint32)args[arg] < val (read, write: an fd the worker holds)
	ownPid                    // allowed when (uint32)args[arg] is the worker's pid (tgkill: its own threads)
)

// pidSlot is the K of the instruction that compares with the worker's pid: the filter is built
// before the worker exists, so its lockdown writes its pid there (pidInsn) before installing it.
const pidSlot = 0xfffffffe

// pidInsn is the index of the instruction of p whose K is the worker's pid (its only pidSlot).
func pidInsn(p []insn) (int, error) {
	at := -1
	for i, in := range p {
		if in.K == pidSlot && in.Code == bpfJMP|bpfJEQ|bpfK {
			if at >= 0 {
				return 0, fmt.Errorf("native: two pid slots in the filter")
			}
			at = i
		}
	}
	if at < 0 {
		return 0, fmt.Errorf("native: no pid slot in the filter")
	}
	return at, nil
}

// rule allows one system call, maybe on a condition on one argument.
type rule struct {
	nr   uint32
	kind ruleKind
	arg  int
	val  uint32
}

// maxFD bounds the fds read and write may use: 0 (requests), 1 and 2 (stdout, stderr), 3
// (replies) and the runtime's epoll and eventfd, made before the filter; no fd can be made after
// it (RLIMIT_NOFILE 0, and no call that makes one is allowed).
const maxFD = 8

// allowlist is what the worker may call after lockdown (see RATIONALE, "The native backend").
func allowlist(s sysnums) []rule {
	r := []rule{
		{nr: s.read, kind: below, arg: 0, val: maxFD},
		{nr: s.write, kind: below, arg: 0, val: maxFD},
		{nr: s.mmap, kind: maskClear, arg: 2, val: protExec},
		{nr: s.mprotect, kind: maskClear, arg: 2, val: protExec},
		{nr: s.clone, kind: maskSet, arg: 0, val: cloneThread},
		// The runtime signals only its own threads (preemption, a crash); another process (the
		// forge server, another worker: the same user) is refused.
		{nr: s.tgkill, kind: ownPid, arg: 0},
	}
	for _, nr := range s.always {
		r = append(r, rule{nr: nr})
	}
	return r
}

// buildFilter compiles rules into a BPF program for the architecture s describes.
func buildFilter(s sysnums, rules []rule) []insn {
	p := []insn{
		{Code: bpfLD | bpfW | bpfABS, K: offArch},
		{Code: bpfJMP | bpfJEQ | bpfK, Jt: 1, Jf: 0, K: s.auditArch},
		{Code: bpfRET | bpfK, K: retKillProcess},
		{Code: bpfLD | bpfW | bpfABS, K: offNr},
	}
	if s.x32 {
		p = append(p,
			insn{Code: bpfJMP | bpfJGE | bpfK, Jt: 0, Jf: 1, K: x32Bit},
			insn{Code: bpfRET | bpfK, K: retKillProcess})
	}
	deny := insn{Code: bpfRET | bpfK, K: retErrno | errnoEPERM}
	allow := insn{Code: bpfRET | bpfK, K: retAllow}
	for _, r := range rules {
		if r.kind == always {
			p = append(p, insn{Code: bpfJMP | bpfJEQ | bpfK, Jt: 0, Jf: 1, K: r.nr}, allow)
			continue
		}
		// jeq nr; ld arg; test (jt/jf to allow or deny); allow; deny. Every branch returns, so
		// the accumulator need not be reloaded with nr.
		var test insn
		switch r.kind {
		case maskClear:
			test = insn{Code: bpfJMP | bpfJSET | bpfK, Jt: 1, Jf: 0, K: r.val}
		case maskSet:
			test = insn{Code: bpfJMP | bpfJSET | bpfK, Jt: 0, Jf: 1, K: r.val}
		case below:
			test = insn{Code: bpfJMP | bpfJGE | bpfK, Jt: 1, Jf: 0, K: r.val}
		case ownPid:
			test = insn{Code: bpfJMP | bpfJEQ | bpfK, Jt: 0, Jf: 1, K: pidSlot}
		}
		p = append(p,
			insn{Code: bpfJMP | bpfJEQ | bpfK, Jt: 0, Jf: 4, K: r.nr},
			insn{Code: bpfLD | bpfW | bpfABS, K: uint32(offArgs + 8*r.arg)},
			test, allow, deny)
	}
	return append(p, deny)
}

// filterSource renders p as the Go literal the guest's lockdown package installs.
func filterSource(p []insn) string {
	var b strings.Builder
	b.WriteString("[]syscall.SockFilter{\n")
	for _, in := range p {
		fmt.Fprintf(&b, "\t{Code: %#x, Jt: %d, Jf: %d, K: %#x},\n", in.Code, in.Jt, in.Jf, in.K)
	}
	b.WriteString("}")
	return b.String()
}

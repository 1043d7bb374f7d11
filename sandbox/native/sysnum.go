package native

import "runtime"

// sysnums are one architecture's system call numbers for the worker's filter.
type sysnums struct {
	arch      string // GOARCH; "" where the backend does not run
	auditArch uint32 // AUDIT_ARCH_* of seccomp_data.arch
	x32       bool   // amd64: refuse the x32 ABI's numbers (nr | 0x40000000)
	seccomp   uint32 // the seccomp system call, for the lockdown
	// memfd_create, for the parent: a worker's executable is a sealed memfd (image.go)
	memfdCreate uint32

	read, write, mmap, mprotect, clone, tgkill uint32 // allowed with a condition on an argument
	always                                     []uint32
}

// hostSysnums are this machine's (empty where the backend does not run: Available says so).
var hostSysnums = sysnumsFor(runtime.GOARCH)

func sysnumsFor(goarch string) sysnums {
	switch goarch {
	case "amd64":
		return amd64Sysnums
	case "arm64":
		return arm64Sysnums
	}
	return sysnums{}
}

// sysnums of linux/amd64 (arch/x86/entry/syscalls/syscall_64.tbl).
var amd64Sysnums = sysnums{
	arch: "amd64", auditArch: 0xc000003e, x32: true, seccomp: 317, memfdCreate: 319,
	read: 0, write: 1, mmap: 9, mprotect: 10, clone: 56, tgkill: 234,
	always: []uint32{
		11,  // munmap
		13,  // rt_sigaction
		14,  // rt_sigprocmask
		15,  // rt_sigreturn
		24,  // sched_yield
		28,  // madvise
		35,  // nanosleep
		39,  // getpid
		60,  // exit
		96,  // gettimeofday
		131, // sigaltstack
		186, // gettid
		202, // futex
		219, // restart_syscall
		228, // clock_gettime
		230, // clock_nanosleep
		231, // exit_group
		232, // epoll_wait
		281, // epoll_pwait
		318, // getrandom
		441, // epoll_pwait2
	},
}

// sysnums of linux/arm64 (include/uapi/asm-generic/unistd.h).
var arm64Sysnums = sysnums{
	arch: "arm64", auditArch: 0xc00000b7, seccomp: 277, memfdCreate: 279,
	read: 63, write: 64, mmap: 222, mprotect: 226, clone: 220, tgkill: 131,
	always: []uint32{
		215, // munmap
		134, // rt_sigaction
		135, // rt_sigprocmask
		139, // rt_sigreturn
		124, // sched_yield
		233, // madvise
		101, // nanosleep
		172, // getpid
		93,  // exit
		169, // gettimeofday
		132, // sigaltstack
		178, // gettid
		98,  // futex
		128, // restart_syscall
		113, // clock_gettime
		115, // clock_nanosleep
		94,  // exit_group
		22,  // epoll_pwait
		278, // getrandom
		441, // epoll_pwait2
	},
}

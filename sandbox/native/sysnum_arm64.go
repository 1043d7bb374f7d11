package native

// sysnums of linux/arm64 (include/uapi/asm-generic/unistd.h).
var hostSysnums = sysnums{
	arch: "arm64", auditArch: 0xc00000b7, seccomp: 277,
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

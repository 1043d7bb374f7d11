package native

// sysnums of linux/amd64 (arch/x86/entry/syscalls/syscall_64.tbl).
var hostSysnums = sysnums{
	arch: "amd64", auditArch: 0xc000003e, x32: true, seccomp: 317,
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

package native

// sysnums are one architecture's system call numbers for the worker's filter.
type sysnums struct {
	arch      string // GOARCH; "" where the backend does not run
	auditArch uint32 // AUDIT_ARCH_* of seccomp_data.arch
	x32       bool   // amd64: refuse the x32 ABI's numbers (nr | 0x40000000)
	seccomp   uint32 // the seccomp system call, for the lockdown

	read, write, mmap, mprotect, clone, tgkill uint32 // allowed with a condition on an argument
	always                                     []uint32
}

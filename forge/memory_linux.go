package forge

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// usableMemory is the memory this process may use: physical memory, or its cgroup's limit when
// lower (a container); 0 when unknown.
func usableMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	mem := int64(uint64(si.Totalram) * uint64(si.Unit))
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(f); err == nil {
			if l := cgroupLimit(string(b)); l > 0 && (mem <= 0 || l < mem) {
				mem = l
			}
		}
	}
	return max(mem, 0)
}

// cgroupLimit parses a cgroup memory limit file (v2 memory.max, v1 memory.limit_in_bytes): 0 for
// none ("max") or unreadable.
func cgroupLimit(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

package bench

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// memSample is the process's resident memory: VmRSS (now) and VmHWM (peak) from
// /proc/self/status on Linux; elsewhere the Go runtime's Sys (memory obtained from the OS, an
// upper bound of the Go part only) stands in for both, and Source says so.
type memSample struct {
	RSS, HWM int64
	Source   string
}

const (
	sourceProc    = "/proc/self/status"
	sourceRuntime = "go runtime Sys (no /proc: off Linux, the Go heap and stacks only)"
)

func readMem() memSample {
	if rss, hwm, ok := procStatus("/proc/self/status"); ok {
		return memSample{RSS: rss, HWM: hwm, Source: sourceProc}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSample{RSS: int64(ms.Sys), HWM: int64(ms.Sys), Source: sourceRuntime}
}

// procStatus reads VmRSS and VmHWM (bytes) from a /proc/<pid>/status file.
func procStatus(path string) (rss, hwm int64, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			rss, ok = kB(line[len("VmRSS:"):]), true
		case strings.HasPrefix(line, "VmHWM:"):
			hwm = kB(line[len("VmHWM:"):])
		}
	}
	return rss, hwm, ok
}

func kB(field string) int64 {
	f := strings.Fields(field) // "1234 kB"
	if len(f) == 0 {
		return 0
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0
	}
	return n << 10
}

// childrenRSS sums VmRSS over this process's direct children (yaegi worker processes), read
// from /proc; 0 and false off Linux.
func childrenRSS() (total int64, n int, ok bool) {
	self := os.Getpid()
	dirs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(dirs) == 0 {
		return 0, 0, false
	}
	for _, st := range dirs {
		data, err := os.ReadFile(st)
		if err != nil {
			continue // the process ended meanwhile
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses; cut at the last ')'.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err != nil || ppid != self {
			continue
		}
		if rss, _, ok := procStatus(filepath.Join(filepath.Dir(st), "status")); ok {
			total += rss
			n++
		}
	}
	return total, n, true
}

// dirBytes is the total size of the regular files under dir (0 if it does not exist).
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

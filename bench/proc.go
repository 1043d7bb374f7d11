package bench

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
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

// logMeter counts the bytes appended to the event log's files (events/forge.jsonl and its
// rotations) across rotations: each file is identified by os.SameFile and its largest size seen
// is kept, so a rotated file that is later deleted still counts. Sampled often enough (a file is
// written only while it is the current log, and is deleted three rotations later), nothing is
// missed. A deleted file's inode may be reused by the next log file (found by a run that lost
// one file's bytes): the log only grows, so the same identity at a smaller size is a new file.
type logMeter struct {
	dir   string
	mu    sync.Mutex
	files []meteredFile
	// retired is what files whose inode was reused appended before they were deleted.
	retired int64
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

type meteredFile struct {
	fi        os.FileInfo
	base, max int64
}

func newLogMeter(dir string, every time.Duration) *logMeter {
	m := &logMeter{dir: dir, stop: make(chan struct{}), done: make(chan struct{})}
	m.sample(true)
	go func() {
		defer close(m.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.sample(false)
			}
		}
	}()
	return m
}

func (m *logMeter) sample(initial bool) {
	ents, err := os.ReadDir(m.dir)
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), "forge.jsonl") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // rotated away meanwhile: seen at its new name next time
		}
		found := false
		for i := range m.files {
			if !os.SameFile(m.files[i].fi, fi) {
				continue
			}
			if fi.Size() < m.files[i].max {
				// The log only grows: a smaller file with the same identity is a new file on
				// the inode of one that rotation deleted. The old one is counted as it was.
				m.retired += m.files[i].max - m.files[i].base
				m.files[i] = meteredFile{fi: fi, max: fi.Size()}
			} else {
				m.files[i].fi, m.files[i].max = fi, fi.Size()
			}
			found = true
			break
		}
		if !found {
			f := meteredFile{fi: fi, max: fi.Size()}
			if initial {
				f.base = fi.Size()
			}
			m.files = append(m.files, f)
		}
	}
}

// written stops the meter (after a last sample) and returns the bytes appended since it started.
func (m *logMeter) written() int64 {
	m.once.Do(func() { close(m.stop) })
	<-m.done
	m.sample(false)
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.retired
	for _, f := range m.files {
		n += f.max - f.base
	}
	return n
}

package native

import (
	"fmt"
	"go/token"
	"strconv"
	"strings"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// guestVersion changes whenever the generated worker code changes, so cached executables built
// from an older one are never reused.
const guestVersion = "forge-native-guest-7"

// A worker's marks, around a call whose prints are its logs: startMarkPrefix+token+markSuffix+"\n"
// and endMarkPrefix+... on stdout (lockdown.Begin and End: the lines between are the call's; a
// call without logs writes neither, a pipe hop less). The token is the worker's own (tokenLen
// bytes, the first its stdin carries): its artifact cannot read it, so cannot forge a mark.
const (
	startMarkPrefix = "\x00forge: start of call "
	endMarkPrefix   = "\x00forge: end of call "
	markSuffix      = "\x00"
	tokenLen        = 26 // crypto/rand.Text
)

// exitLockdown is the worker's exit code when it could not lock itself down: no artifact code
// ran.
const exitLockdown = 97

// guestModule is the Go module built into one artifact's worker executable: module "forge" with
// the artifact (and the generated dispatcher) in forge/artifact, forge/host over the pipe,
// forge/lockdown and package main.
type guestModule struct {
	files map[string]string
}

// withLockdown adds `import _ "forge/lockdown"` to code (normalized to package artifact) right
// after its package clause, on the same line, so that no line moves: the artifact then imports
// the lockdown package, and Go initializes a package's imports before the package itself, so the
// lockdown's init runs before any of the artifact's package variables or init functions.
func withLockdown(code string) (string, error) {
	_, f, fset, err := guestgen.NormalizePackage(code)
	if err != nil {
		return "", err
	}
	end := fset.Position(f.Name.End()).Offset
	if fset.Position(f.Name.End()).Line != fset.Position(f.Package).Line && f.Package != token.NoPos {
		return "", fmt.Errorf("native: package clause spans lines")
	}
	return code[:end] + `; import _ "forge/lockdown"` + code[end:], nil
}

// callGuest generates the worker module for sig's function in code (gated and normalized).
func callGuest(code string, sig sandbox.Signature, nums sysnums) (guestModule, error) {
	locked, err := withLockdown(code)
	if err != nil {
		return guestModule{}, err
	}
	return guestModule{files: map[string]string{
		"go.mod":                  "module forge\n\ngo 1.24\n",
		"main.go":                 mainSource,
		"host/host.go":            guestgen.HostAPISource,
		"host/transport.go":       transportSource,
		"lockdown/lockdown.go":    lockdownSource(nums),
		"argdecode/argdecode.go":  sandbox.ArgDecoderSource("argdecode"),
		"artifact/artifact.go":    locked,
		"artifact/forge__call.go": guestgen.DispatcherSource(sig),
	}}, nil
}

// key is the content hash that names the executable in the build cache.
func (g guestModule) key(goVersion string) string {
	return guestgen.ModuleKey(guestVersion+"\x00"+goVersion+"\x00"+hostSysnums.arch+"\x00", g.files)
}

// transportSource carries forge/host's requests over the worker's pipes (lockdown.Exchange).
const transportSource = `package host

import "forge/lockdown"

func exchange(op uint32, req []byte) []byte { return lockdown.Exchange(op, req) }
`

// mainSource is the worker's loop: it reads a request (the call's stack cap, little-endian
// uint64, whether its prints are its logs, one byte, then the framed args) from fd 0, calls the dispatcher and writes its tagged result as
// an 'r' frame on fd 3. It starts by writing a 'k' frame: every package initializer, the
// artifact's included, has run.
const mainSource = `package main

import (
	"runtime/debug"

	"forge/artifact"
	"forge/lockdown"
)

func main() {
	lockdown.WriteFrame('k', nil)
	var maxStack uint64
	for {
		in := lockdown.ReadRequest()
		if len(in) < 9 {
			lockdown.Exit(0)
		}
		ms := uint64(in[0]) | uint64(in[1])<<8 | uint64(in[2])<<16 | uint64(in[3])<<24 |
			uint64(in[4])<<32 | uint64(in[5])<<40 | uint64(in[6])<<48 | uint64(in[7])<<56
		if ms != maxStack && ms > 0 {
			debug.SetMaxStack(int(ms))
			maxStack = ms
		}
		lockdown.Begin(in[8] != 0)
		out := artifact.Forge__Call(in[9:len(in):len(in)])
		lockdown.End()
		lockdown.WriteFrame('r', out)
	}
}
`

// lockdownSource is forge/lockdown: its init locks the process down (see RATIONALE, "The native
// backend"), and it carries the worker's frames.
func lockdownSource(nums sysnums) string {
	filter := buildFilter(nums, allowlist(nums))
	at, err := pidInsn(filter)
	if err != nil {
		panic(err) // the allowlist has exactly one ownPid rule
	}
	return strings.NewReplacer(
		"{{FILTER}}", filterSource(filter),
		"{{PID_INSN}}", fmt.Sprint(at),
		"{{START_MARK}}", strconv.Quote(startMarkPrefix),
		"{{END_MARK}}", strconv.Quote(endMarkPrefix),
		"{{MARK_SUFFIX}}", strconv.Quote(markSuffix+"\n"),
		"{{TOKEN_LEN}}", fmt.Sprint(tokenLen),
		"{{IMAGE_FD}}", fmt.Sprint(imageFD),
		"{{SYS_SECCOMP}}", fmt.Sprint(nums.seccomp),
		"{{EXIT_LOCKDOWN}}", fmt.Sprint(exitLockdown),
	).Replace(lockdownTemplate)
}

const lockdownTemplate = `// Package lockdown locks the worker process down before any artifact code runs, and carries its
// frames: requests on fd 0, frames ('k' ready, 'h' host request, 'r' result) on fd 3.
package lockdown

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

func init() {
	if err := lock(); err != nil {
		fail("forge lockdown: " + err.Error())
	}
}

func fail(msg string) {
	syscall.Write(2, []byte(msg+"\n"))
	Exit({{EXIT_LOCKDOWN}})
}

// Exit ends the worker.
func Exit(code int) { syscall.Exit(code) }

var filter = {{FILTER}}

// The marks of Begin and End, with the token the parent sent first on stdin.
var startMark, endMark []byte

func lock() error {
	// The executable's fd (the worker was exec'd from it): not the artifact's.
	syscall.Close({{IMAGE_FD}})
	var token [{{TOKEN_LEN}}]byte
	if !readFull(0, token[:]) {
		return errorString("no token on stdin")
	}
	startMark = []byte({{START_MARK}} + string(token[:]) + {{MARK_SUFFIX}})
	endMark = []byte({{END_MARK}} + string(token[:]) + {{MARK_SUFFIX}})
	// One P: a worker serves one call at a time, its goroutines share one core (a guest that
	// spawns compute goroutines cannot take the machine's), and fewer runtime threads.
	runtime.GOMAXPROCS(1)
	debug.SetMaxThreads(128)
	if len(os.Args) < 2 {
		return errorString("no memory cap argument")
	}
	mem, err := strconv.ParseInt(os.Args[1], 10, 64)
	if err != nil || mem <= 0 {
		return errorString("bad memory cap argument")
	}
	// The runtime's timers wake it through the network poller (epoll and an eventfd): start it
	// now, while those fds can still be made.
	time.Sleep(time.Nanosecond)
	// time.Local as the wasm guest has it: named "Local", at UTC, whatever the machine's zone
	// (and /etc/localtime could not be read after the filter anyway).
	loc, err := time.LoadLocationFromTZData("Local", []byte(utcTZif))
	if err != nil {
		return errorString("time zone: " + err.Error())
	}
	time.Local = loc
	data, err := vmData()
	if err != nil {
		return err
	}
	debug.SetMemoryLimit(mem)
	// RLIMIT_DATA counts the private writable memory the runtime maps (its heap, stacks), not its
	// PROT_NONE reservations: what the process holds now plus the cap and a little room.
	lim := uint64(data) + uint64(mem) + 32<<20
	for _, l := range []struct {
		res      int
		cur, max uint64
	}{
		{syscall.RLIMIT_FSIZE, 0, 0},
		{syscall.RLIMIT_CORE, 0, 0},
		{syscall.RLIMIT_NOFILE, 0, 0},
		{syscall.RLIMIT_DATA, lim, lim},
	} {
		if err := syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: l.cur, Max: l.max}); err != nil {
			return errorString("setrlimit " + strconv.Itoa(l.res) + ": " + err.Error())
		}
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, 38 /* PR_SET_NO_NEW_PRIVS */, 1, 0, 0, 0, 0); e != 0 {
		return errorString("prctl(PR_SET_NO_NEW_PRIVS): " + e.Error())
	}
	filter[{{PID_INSN}}].K = uint32(syscall.Getpid()) // tgkill: this process's threads only
	prog := syscall.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// SECCOMP_SET_MODE_FILTER with SECCOMP_FILTER_FLAG_TSYNC: every thread of the process, and
	// every thread made later, runs under the filter.
	r, _, e := syscall.RawSyscall({{SYS_SECCOMP}}, 1, 1, uintptr(unsafe.Pointer(&prog)))
	if e != 0 {
		return errorString("seccomp: " + e.Error())
	}
	if r != 0 {
		return errorString("seccomp: thread " + strconv.Itoa(int(r)) + " could not be synchronized")
	}
	return nil
}

// utcTZif is a TZif file of one zone, UTC at offset 0: header, counts (no transitions, one
// type, four bytes of names), the type and its name.
const utcTZif = "TZif" + "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x01" + "\x00\x00\x00\x04" +
	"\x00\x00\x00\x00\x00\x00" + "UTC\x00"

type errorString string

func (e errorString) Error() string { return string(e) }

// vmData is the process's private writable memory now (VmData of /proc/self/status), in bytes.
func vmData() (int64, error) {
	fd, err := syscall.Open("/proc/self/status", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, errorString("open /proc/self/status: " + err.Error())
	}
	defer syscall.Close(fd)
	buf := make([]byte, 16<<10)
	n, _ := syscall.Read(fd, buf)
	if n < 0 {
		n = 0
	}
	s := string(buf[:n])
	for len(s) > 0 {
		line := s
		if i := indexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if len(line) > 7 && line[:7] == "VmData:" {
			f := line[7:]
			kb := int64(0)
			for i := 0; i < len(f); i++ {
				if c := f[i]; c >= '0' && c <= '9' {
					kb = kb*10 + int64(c-'0')
				}
			}
			return kb << 10, nil
		}
	}
	return 0, errorString("no VmData in /proc/self/status")
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func readFull(fd int, b []byte) bool {
	for len(b) > 0 {
		n, err := syscall.Read(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

func writeAll(fd int, b []byte) {
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			Exit(0) // the parent is gone
		}
		b = b[n:]
	}
}

var reqBuf = make([]byte, 64<<10)

// ReadRequest reads the next request ([uint32 length][payload]); nil at the end of input.
func ReadRequest() []byte {
	var h [4]byte
	if !readFull(0, h[:]) {
		return nil
	}
	n := int(uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16 | uint32(h[3])<<24)
	if n > cap(reqBuf) {
		reqBuf = make([]byte, n)
	}
	if !readFull(0, reqBuf[:n]) {
		return nil
	}
	return reqBuf[:n]
}

var out []byte

// WriteFrame writes [tag][uint32 length][parts...] to fd 3.
func WriteFrame(tag byte, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out = append(out[:0], tag, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	for _, p := range parts {
		out = append(out, p...)
	}
	writeAll(3, out)
	if cap(out) > 1<<20 {
		out = nil
	}
}

var (
	mu     sync.Mutex
	active bool
	logged bool // the call's prints are its logs
)

// Begin and End bracket a call: host requests are carried only inside one, and End waits for one
// in progress, so a goroutine the call left behind never speaks between calls. When its prints
// are its logs, they also mark its start and end on stdout: the parent takes the lines between as
// the call's, and knows it has them all.
func Begin(logs bool) {
	if logs {
		writeAll(1, startMark)
	}
	mu.Lock()
	active, logged = true, logs
	mu.Unlock()
}

// End: see Begin.
func End() {
	mu.Lock()
	active = false
	logs := logged
	mu.Unlock()
	if logs {
		writeAll(1, endMark)
	}
}

var outside = []byte(` + "`" + `{"e":"host API used outside a call (by a goroutine the call left running)"}` + "`" + `)

// Exchange sends one host request ('h' frame: op, then the request) and reads the reply.
func Exchange(op uint32, req []byte) []byte {
	mu.Lock()
	defer mu.Unlock()
	if !active {
		return outside
	}
	WriteFrame('h', []byte{byte(op), byte(op >> 8), byte(op >> 16), byte(op >> 24)}, req)
	var h [4]byte
	if !readFull(0, h[:]) {
		Exit(0)
	}
	n := int(uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16 | uint32(h[3])<<24)
	buf := make([]byte, n)
	if !readFull(0, buf) {
		Exit(0)
	}
	return buf
}
`

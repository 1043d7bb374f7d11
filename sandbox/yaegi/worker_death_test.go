package yaegi

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

// TestWorkerDeathClassification maps every way a worker can die onto the kind the failure
// classifier needs: the code's doing is intrinsic (memory, depth, panic, deadline), anything else
// stays internal.
func TestWorkerDeathClassification(t *testing.T) {
	const mem = 64 << 20
	stack := "runtime: goroutine stack exceeds 33554432-byte limit\nruntime: sp=0xc0200e0390 stack=[0xc0200e0000, 0xc0400e0000]\nfatal error: stack overflow\n\nruntime stack:\nruntime.throw(...)\n"
	cases := []struct {
		name     string
		d        death
		kind     sandbox.Kind
		contains string
	}{
		{"memory watchdog", death{code: exitMemory}, sandbox.KindMemory, "memory cap of 64 MiB exceeded"},
		{"stack overflow", death{code: 2, stderr: stack}, sandbox.KindDepth, "fatal error: stack overflow"},
		{"runtime out of memory", death{code: 2, stderr: "fatal error: out of memory\n\ngoroutine 1 [running]:\n"}, sandbox.KindMemory, "fatal error: out of memory"},
		{"mmap refused under RLIMIT_AS", death{code: 2, stderr: "runtime: cannot allocate memory\nfatal error: runtime: cannot allocate memory\n"}, sandbox.KindMemory, "cannot allocate memory"},
		{"race detector allocator", death{code: 66, stderr: "==123==ERROR: ThreadSanitizer failed to allocate 0x1000 bytes\n"}, sandbox.KindMemory, "over the memory cap"},
		{"race runtime under RLIMIT_AS", death{code: 2, stderr: "fatal error: too many address space collisions for -race mode\n"}, sandbox.KindMemory, "address space collisions"},
		{"CPU rlimit (SIGXCPU)", death{code: -1, signal: "CPU time limit exceeded", cpuLimit: 600 * time.Second}, sandbox.KindDeadline, "CPU time limit of 10m0s"},
		{"CPU hard rlimit (SIGKILL at the limit)", death{code: -1, signal: "killed", cpu: 600 * time.Second, cpuLimit: 600 * time.Second}, sandbox.KindDeadline, "CPU time limit"},
		{"OOM killer", death{code: -1, signal: "killed", maxRSS: 60 << 20, cpu: time.Second, cpuLimit: 600 * time.Second}, sandbox.KindMemory, "OOM killer"},
		{"fatal runtime error", death{code: 2, stderr: "fatal error: concurrent map writes\n\ngoroutine 7 [running]:\n"}, sandbox.KindPanic, "fatal error: concurrent map writes"},
		{"unrecovered panic", death{code: 2, stderr: "panic: kill the host\n\ngoroutine 9 [running]:\n"}, sandbox.KindPanic, "panic: kill the host"},
		{"killed from outside", death{code: -1, signal: "killed", maxRSS: 20 << 20, cpu: time.Second, cpuLimit: 600 * time.Second}, sandbox.KindInternal, "no reason attributable"},
		{"terminated", death{code: -1, signal: "terminated"}, sandbox.KindInternal, "signal: terminated"},
		{"exit without a word", death{code: 1}, sandbox.KindInternal, "exit 1"},
		{"worker error on startup", death{code: 1, stderr: "sandbox-worker: setrlimit AS: operation not permitted\n"}, sandbox.KindInternal, "exit 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.d.during, c.d.memLimit = "run", mem
			e := c.d.classify()
			if e.Kind != c.kind {
				t.Fatalf("kind %s, want %s: %v", e.Kind, c.kind, e)
			}
			if !strings.Contains(e.Message, c.contains) {
				t.Fatalf("message %q does not contain %q", e.Message, c.contains)
			}
			if !strings.Contains(e.Message, "during run") {
				t.Fatalf("message %q does not say when the worker died", e.Message)
			}
		})
	}
}

// TestWorkerStartFailureIsInternal checks that a worker that cannot be started is the sandbox's
// failure, with a message that says what to do.
func TestWorkerStartFailureIsInternal(t *testing.T) {
	sb := New(Options{Worker: WorkerConfig{Path: filepath.Join(t.TempDir(), "no-such-forge")}})
	defer sb.Close()
	_, err := sb.Compile(context.Background(), isolatedSource("package artifact\nfunc F() int { return 1 }"))
	if sandbox.KindOf(err) != sandbox.KindInternal || !strings.Contains(err.Error(), WorkerPathEnv) {
		t.Fatalf("err = %v, want an internal error naming $%s", err, WorkerPathEnv)
	}
}

// TestWorkerCommandOrder checks where the worker binary comes from: Command, Path,
// $FORGE_WORKER, this executable (it serves workers: TestMain called MaybeServeWorker), PATH.
func TestWorkerCommandOrder(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	t.Setenv(WorkerPathEnv, "")
	p := newWorkerPool(WorkerConfig{Command: []string{"a", "b"}, Path: "/x/forge"})
	if argv, _ := p.command(); strings.Join(argv, " ") != "a b" {
		t.Fatalf("Command: argv %v", argv)
	}
	p = newWorkerPool(WorkerConfig{Path: "/x/forge"})
	if argv, _ := p.command(); strings.Join(argv, " ") != "/x/forge sandbox-worker" {
		t.Fatalf("Path: argv %v", argv)
	}
	t.Setenv(WorkerPathEnv, "/env/forge")
	p = newWorkerPool(WorkerConfig{})
	if argv, _ := p.command(); strings.Join(argv, " ") != "/env/forge sandbox-worker" {
		t.Fatalf("$%s: argv %v", WorkerPathEnv, argv)
	}
	t.Setenv(WorkerPathEnv, "")
	if argv, _ := p.command(); len(argv) != len(os.Args) || argv[0] != exe || strings.Join(argv[1:], " ") != strings.Join(os.Args[1:], " ") {
		t.Fatalf("self: argv %v, want %s and this process's args %v", argv, exe, os.Args[1:])
	}
	servesWorkers.Store(false)
	defer servesWorkers.Store(true)
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	if _, err := p.command(); !errors.Is(err, ErrNoWorker) || !strings.Contains(err.Error(), "MaybeServeWorker") {
		t.Fatalf("nothing found: err %v", err)
	}
	fake := filepath.Join(dir, "forge")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("forge"); err != nil {
		t.Skip("PATH lookup unavailable here:", err)
	}
	if argv, _ := p.command(); strings.Join(argv, " ") != fake+" sandbox-worker" {
		t.Fatalf("PATH: argv %v", argv)
	}
}

func isolatedSource(code string) sandbox.Source {
	return sandbox.Source{Code: code, Limits: sandbox.Limits{Isolation: sandbox.IsolationProcess}}
}

// TestIsolatedCompile checks that an isolated Compile builds no interpreter in the host, that a
// compile error from the worker is the one in-process compile gives (kind, line, hint), and that
// each program gets workers of its own.
func TestIsolatedCompile(t *testing.T) {
	ctx := context.Background()
	sb := New(Options{PoolSize: 1})
	defer sb.Close()
	prog, err := sb.Compile(ctx, isolatedSource("package artifact\nvar n int\n\nfunc F() int { n++; return n }"))
	if err != nil {
		t.Fatal(err)
	}
	p := prog.(*Program)
	if !p.isolated || p.idle != nil || p.sem != nil || p.code != "" {
		t.Fatalf("isolated program holds host interpreter state: isolated=%v idle=%v sem=%v code=%q", p.isolated, p.idle != nil, p.sem != nil, p.code)
	}
	for _, code := range []string{
		"package artifact\n\nfunc F() int {\n\treturn \"x\"\n}",
		"package artifact\n\nfunc F(a, b int) int {\n\treturn min(a, b)\n}",
		"package artifact\n\nimport \"strings\"\n\nfunc F() string {\n\treturn strings.NoSuchFunc()\n}",
	} {
		_, inErr := sb.Compile(ctx, sandbox.Source{Code: code})
		_, isoErr := sb.Compile(ctx, isolatedSource(code))
		in, iso := sandbox.AsError(inErr), sandbox.AsError(isoErr)
		if in == nil || iso == nil {
			if in == nil && iso == nil {
				continue // yaegi accepts it in both modes
			}
			t.Fatalf("%q: in-process %v, isolated %v", code, inErr, isoErr)
		}
		if in.Kind != iso.Kind || in.Line != iso.Line || in.Hint != iso.Hint || in.Message != iso.Message {
			t.Fatalf("%q: isolated compile error %+v, in-process %+v", code, iso, in)
		}
	}
	other, err := sb.Compile(ctx, isolatedSource("package artifact\nvar n int\n\n// another program\nfunc F() int { n++; return n }"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range []sandbox.Program{prog, prog, other} {
		if _, err := sb.Run(ctx, pr, sandbox.Input{}); err != nil {
			t.Fatal(err)
		}
	}
	sb.workers.mu.Lock()
	defer sb.workers.mu.Unlock()
	pids := map[string]int{}
	for key, ws := range sb.workers.idle {
		for _, w := range ws {
			pids[key.sum] = w.cmd.Process.Pid
		}
		if key.sum == prog.Checksum() && len(ws) != 1 {
			t.Fatalf("program has %d idle workers, want the one that compiled it", len(ws))
		}
	}
	a, b := pids[prog.Checksum()], pids[other.Checksum()]
	if a == 0 || b == 0 || a == b {
		t.Fatalf("want a worker of its own for each program, got pids %d and %d", a, b)
	}
}

// TestIsolatedTest checks that acceptance tests of an isolated program run in a worker with the
// in-process results, and that an artifact whose test kills the worker is the code's error.
func TestIsolatedTest(t *testing.T) {
	ctx := context.Background()
	sb := New(Options{})
	defer sb.Close()
	code := "package artifact\n\nfunc Add(a, b int) int { return a + b }\n"
	tests := "package artifact\n\nimport (\n\t\"testing\"\n\n\t\"github.com/stretchr/testify/assert\"\n)\n\n" +
		"func TestAdd(t *testing.T) { assert.Equal(t, 3, Add(1, 2)) }\n\nfunc TestWrong(t *testing.T) { assert.Equal(t, 4, Add(1, 2)) }\n"
	in, err := sb.Test(ctx, sandbox.Source{Code: code}, tests, sandbox.Input{})
	if err != nil {
		t.Fatal(err)
	}
	iso, err := sb.Test(ctx, isolatedSource(code), tests, sandbox.Input{})
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 2 || len(iso) != 2 {
		t.Fatalf("results: in-process %+v, isolated %+v", in, iso)
	}
	for i := range in {
		if in[i].Name != iso[i].Name || in[i].Passed != iso[i].Passed || in[i].Message != iso[i].Message {
			t.Fatalf("isolated %+v, in-process %+v", iso[i], in[i])
		}
	}
	// fmt on a slice that contains itself recurses in native code only (no guest frame for the
	// depth guard to count): the worker dies of a stack overflow. (Recursion through a callback,
	// strings.Map(shout, s), is now stopped by the depth guard inside the worker.)
	crash := "package artifact\n\nimport \"fmt\"\n\nfunc Shout(s string) string {\n\tx := []any{s}\n\tx[0] = x\n\treturn fmt.Sprint(x)\n}\n"
	crashTests := "package artifact\n\nimport \"testing\"\n\nfunc TestShout(t *testing.T) {\n\tif Shout(\"a\") != \"A\" {\n\t\tt.Fatal(\"no\")\n\t}\n}\n"
	_, err = sb.Test(ctx, sandbox.Source{Code: crash}, crashTests, sandbox.Input{Limits: sandbox.Limits{Isolation: sandbox.IsolationProcess, Timeout: 5 * time.Second}})
	if k := sandbox.KindOf(err); k != sandbox.KindDepth && k != sandbox.KindMemory {
		t.Fatalf("err = %v, want the worker's death as the code's depth or memory error", err)
	}
}

// TestIsolatedProgramDropsItsWorkers checks that an unreachable isolated program's idle workers
// are stopped.
func TestIsolatedProgramDropsItsWorkers(t *testing.T) {
	sb := New(Options{})
	defer sb.Close()
	func() {
		p, err := sb.Compile(context.Background(), isolatedSource("package artifact\n\nfunc F() int { return 7 }\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sb.Run(context.Background(), p, sandbox.Input{}); err != nil {
			t.Fatal(err)
		}
	}()
	idle := func() int {
		sb.workers.mu.Lock()
		defer sb.workers.mu.Unlock()
		return sb.workers.total
	}
	for deadline := time.Now().Add(5 * time.Second); idle() > 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		runtime.GC()
	}
	if n := idle(); n != 0 {
		t.Fatalf("%d workers still live after their program became unreachable", n)
	}
}

// TestIsolatedCallsQueueWithinTheirDeadline checks that a call waiting for one of a program's
// busy workers gives up at its own deadline.
func TestIsolatedCallsQueueWithinTheirDeadline(t *testing.T) {
	sb := New(Options{Isolation: sandbox.IsolationProcess, Worker: WorkerConfig{Max: 1}})
	defer sb.Close()
	p, err := sb.Compile(context.Background(), sandbox.Source{Code: "package artifact\n\nfunc Spin(n int) int {\n\tfor n > 0 {\n\t}\n\treturn n\n}\n"})
	if err != nil {
		t.Fatal(err)
	}
	slow := make(chan error, 1)
	go func() {
		_, err := sb.Run(context.Background(), p, sandbox.Input{Args: []byte(`[1]`), Limits: sandbox.Limits{Timeout: time.Second}})
		slow <- err
	}()
	time.Sleep(200 * time.Millisecond) // the first call holds the only worker
	start := time.Now()
	_, err = sb.Run(context.Background(), p, sandbox.Input{Args: []byte(`[0]`), Limits: sandbox.Limits{Timeout: 100 * time.Millisecond}})
	if sandbox.KindOf(err) != sandbox.KindCapacity || !strings.Contains(err.Error(), "no free worker") {
		t.Fatalf("queued call: %v, want a capacity error at its deadline while waiting for the busy worker", err)
	}
	if took := time.Since(start); took > 2*time.Second { // a hang bound, not a speed test
		t.Fatalf("queued call took %v with a 100ms deadline", took)
	}
	if err := <-slow; sandbox.KindOf(err) != sandbox.KindDeadline {
		t.Fatalf("spinning call: %v, want its deadline", err)
	}
}

// TestForeignWorkerBinary checks that a worker binary that is not a forge worker of this
// version is the sandbox's failure with a message that says what to do, never the code's.
func TestForeignWorkerBinary(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh:", err)
	}
	cases := []struct {
		name     string
		script   string
		contains string
	}{
		{"silent", "sleep 5", "did not greet"},
		{"exits", "exit 0", "does not serve workers"},
		{"older protocol", `echo '{"op":"hello","version":1}'; sleep 5`, "speaks protocol 1"},
		{"not a worker", `echo 'usage: forge [command]'; sleep 5`, "did not greet"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb := New(Options{Worker: WorkerConfig{Command: []string{"sh", "-c", c.script}, GreetTimeout: 300 * time.Millisecond}})
			defer sb.Close()
			_, err := sb.Compile(context.Background(), isolatedSource("package artifact\n\nfunc F() int { return 1 }\n"))
			if sandbox.KindOf(err) != sandbox.KindInternal || !strings.Contains(err.Error(), c.contains) {
				t.Fatalf("err = %v, want an internal error containing %q", err, c.contains)
			}
		})
	}
}

// TestWorkerClipsGuestText checks that guest-made error text reaches the host bounded.
func TestWorkerClipsGuestText(t *testing.T) {
	sb := New(Options{Isolation: sandbox.IsolationProcess})
	defer sb.Close()
	for _, code := range []string{
		"package artifact\n\nimport \"strings\"\n\nfunc F() int { panic(strings.Repeat(\"x\", 32<<20)) }\n",
		"package artifact\n\nimport (\n\t\"errors\"\n\t\"strings\"\n)\n\nfunc F() (int, error) { return 0, errors.New(strings.Repeat(\"y\", 32<<20)) }\n",
	} {
		p, err := sb.Compile(context.Background(), sandbox.Source{Code: code})
		if err != nil {
			t.Fatal(err)
		}
		_, err = sb.Run(context.Background(), p, sandbox.Input{})
		if err == nil || len(err.Error()) > 2*maxErrorText || !strings.Contains(err.Error(), "more bytes cut") {
			n := 0
			if err != nil {
				n = len(err.Error())
			}
			t.Fatalf("error of %d bytes, want a clipped one", n)
		}
	}
}

// TestSlowStartingWorkerIsWaitedFor checks that a worker which greets later than the compile
// bound (a loaded machine schedules a new process late) is waited for and serves: the greeting
// has a hang bound of its own (GreetTimeout), not the compile's.
func TestSlowStartingWorkerIsWaitedFor(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh:", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	// The worker starts 1.5 s late, past the compile bound of 1 s.
	sb := New(Options{Worker: WorkerConfig{Command: []string{"sh", "-c", `sleep 1.5; exec "$0" -test.run='^$'`, exe}, CompileTimeout: time.Second}})
	defer sb.Close()
	p, err := sb.Compile(context.Background(), isolatedSource("package artifact\n\nfunc F() int { return 7 }\n"))
	if err != nil {
		t.Fatalf("a worker that greets late was refused: %v", err)
	}
	out, err := sb.Run(context.Background(), p, sandbox.Input{})
	if err != nil || string(out.Value) != "7" {
		t.Fatalf("Run = %s, %v; want 7", out.Value, err)
	}
}

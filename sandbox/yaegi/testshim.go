package yaegi

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// T is the testing.T acceptance tests get inside the interpreter: native, so testify's assert and
// require accept it as their TestingT, with the methods generated tests use.
type T struct {
	name     string
	mu       sync.Mutex
	failed   bool
	skipped  bool
	msgs     []string
	logs     []string
	cleanups []func()
}

type failNow struct{}
type skipNow struct{}

func (t *T) record(msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
	t.msgs = append(t.msgs, cleanMessage(msg))
}

// cleanMessage drops testify's "Error Trace:" block: inside the sandbox it lists interpreter
// frames, not test lines.
func cleanMessage(msg string) string {
	lines := strings.Split(msg, "\n")
	out := lines[:0]
	inTrace := false
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(trimmed, "Error Trace:"):
			inTrace = true
			continue
		case inTrace && strings.HasPrefix(trimmed, "/"):
			continue
		case strings.HasPrefix(trimmed, "Test:"):
			continue
		}
		inTrace = false
		out = append(out, strings.TrimRight(l, " \t"))
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// Name returns the test's name.
func (t *T) Name() string { return t.name }

// Errorf records a failure and continues.
func (t *T) Errorf(format string, args ...any) { t.record(fmt.Sprintf(format, args...)) }

// Error records a failure and continues.
func (t *T) Error(args ...any) { t.record(fmt.Sprintln(args...)) }

// Fatalf records a failure and stops the test.
func (t *T) Fatalf(format string, args ...any) { t.record(fmt.Sprintf(format, args...)); t.FailNow() }

// Fatal records a failure and stops the test.
func (t *T) Fatal(args ...any) { t.record(fmt.Sprintln(args...)); t.FailNow() }

// Fail marks the test failed.
func (t *T) Fail() { t.mu.Lock(); t.failed = true; t.mu.Unlock() }

// FailNow marks the test failed and stops it.
func (t *T) FailNow() { t.Fail(); panic(failNow{}) }

// Failed reports whether the test has failed.
func (t *T) Failed() bool { t.mu.Lock(); defer t.mu.Unlock(); return t.failed }

// Helper is a no-op: failure positions come from testify's messages.
func (t *T) Helper() {}

// Parallel is a no-op: tests run sequentially.
func (t *T) Parallel() {}

// Log records a log line.
func (t *T) Log(args ...any) {
	t.mu.Lock()
	t.logs = append(t.logs, strings.TrimSpace(fmt.Sprintln(args...)))
	t.mu.Unlock()
}

// Logf records a log line.
func (t *T) Logf(format string, args ...any) {
	t.mu.Lock()
	t.logs = append(t.logs, fmt.Sprintf(format, args...))
	t.mu.Unlock()
}

// Skip logs and skips the test.
func (t *T) Skip(args ...any) { t.Log(args...); t.SkipNow() }

// Skipf logs and skips the test.
func (t *T) Skipf(format string, args ...any) { t.Logf(format, args...); t.SkipNow() }

// SkipNow skips the test.
func (t *T) SkipNow() { t.mu.Lock(); t.skipped = true; t.mu.Unlock(); panic(skipNow{}) }

// Skipped reports whether the test was skipped.
func (t *T) Skipped() bool { t.mu.Lock(); defer t.mu.Unlock(); return t.skipped }

// Cleanup registers f to run when the test ends.
func (t *T) Cleanup(f func()) { t.mu.Lock(); t.cleanups = append(t.cleanups, f); t.mu.Unlock() }

// Run runs f as a subtest; a failure fails t too, with the subtest's name in front of each message.
func (t *T) Run(name string, f func(t *T)) bool {
	sub := &T{name: t.name + "/" + name}
	func() {
		defer func() { sub.end(recover()) }()
		f(sub)
	}()
	if sub.failed {
		t.mu.Lock()
		t.failed = true
		for _, m := range sub.msgs {
			t.msgs = append(t.msgs, sub.name+": "+m)
		}
		t.mu.Unlock()
	}
	t.mu.Lock()
	t.logs = append(t.logs, sub.logs...)
	t.mu.Unlock()
	return !sub.failed
}

// end finishes a test: cleanups, then the panic (if any) it ended with. It runs on the guest
// goroutine (called by the test stub's deferred function), so formatting the panic value, which
// may call the model's methods, happens under the test's deadline; describe recovers a panic in it.
func (t *T) end(r any) {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.record("panic in cleanup: " + describe(r))
				}
			}()
			t.cleanups[i]()
		}()
	}
	switch r.(type) {
	case nil, failNow, skipNow:
	default:
		t.record("panic: " + describe(r))
	}
}

// testingExports is the "testing" package of acceptance tests, plus the hooks the generated test
// stubs call (forge__ prefixed names are unreachable from guest code: the gate refuses them).
func testingExports(cur **T) map[string]reflect.Value {
	return map[string]reflect.Value{
		"T":       reflect.ValueOf((*T)(nil)),
		"Short":   reflect.ValueOf(func() bool { return false }),
		"Verbose": reflect.ValueOf(func() bool { return false }),
		"Forge__Begin": reflect.ValueOf(func(name string) *T {
			*cur = &T{name: name}
			return *cur
		}),
		"Forge__End": reflect.ValueOf(func(t *T, r any) { t.end(r) }),
	}
}

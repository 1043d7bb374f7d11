// Package native is the sandbox backend that runs generated Go as machine code: an artifact is
// gated as for wasm (sandbox/gate), wrapped in the dispatcher both backends share
// (sandbox/internal/guestgen), built with the machine's Go toolchain into a static executable
// (CGO_ENABLED=0; cached by content hash, its SHA-256 recorded outside the cache and checked
// when read) and run as long-lived worker processes, a pool per program and memory cap,
// MaxWorkers in all. A worker is exec'd from a sealed memfd holding the checked bytes (image.go),
// never from a path.
//
// A worker locks itself down before any artifact code runs: the artifact imports forge/lockdown
// (added on its package line, so no line moves), whose init sets GOMAXPROCS to 1, the rlimits
// (no file writes, no core, no new fds, RLIMIT_DATA at the memory cap), PR_SET_NO_NEW_PRIVS and a
// seccomp allowlist on every thread (filter.go): what the Go runtime needs, nothing that opens,
// connects, executes or signals another process. Its environment is empty and its cwd an empty
// directory.
//
// A worker first reads a token of its own from its stdin, which its marks carry (the start and
// end of a call with logs, on stdout): the artifact cannot read it, so a mark it prints is text.
// A call is a length-framed request on the worker's stdin; the worker answers on its fd 3 with
// host requests (forge/host: HTTP, Log, Now, Rand, Call, served by the parent with the call's
// sandbox.Host) and then the dispatcher's tagged result, read within Limits.OutputBytes. At the
// call's deadline the parent SIGKILLs the worker and answers KindDeadline; a worker that dies
// (a panic in a goroutine, memory, stack) is classified from its runtime's report on stderr and
// replaced on the next call.
//
// Test builds the artifact with its test file, the real testing package and testify into a test
// executable behind the same lockdown, and runs the tests in a worker of it; a test that stops its
// worker fails with the reason and the tests after it run in a new one.
//
// The backend is opt-in (sandbox.Backend.OptIn): it is never the default, since an escape from
// Go's memory safety would run machine code in the worker (see RATIONALE, "The native backend").
package native

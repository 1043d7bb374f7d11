// Package yaegi is the in-process sandbox backend: generated Go interpreted by yaegi behind a
// policy gate, with source rewrites for what the interpreter cannot enforce, and optional worker
// processes for crash and memory isolation.
//
// Compile parses, gates (sandbox/gate, shared with the wasm backend: allowlisted imports and
// symbols, generated with the tables in ./symbols, no goroutines, no directives, no cgo, no
// host-reaching symbols), rewrites (call-depth guard, interpreter gap
// fixes, forgotten imports) and loads the file into the first pooled interpreter. An interpreter
// gets the allowlisted symbol tables and, only when the code imports slices, maps or cmp, yaegi's
// generic sources for those (see stdlib.go). Run decodes JSON args into the function's parameter
// types, takes a free pooled interpreter and calls a function value of it on the caller's own
// goroutine (no goroutine per interpreter or per call), under a deadline that stops the
// interpreter through yaegi's own stop (see instance.call and stopInterpreter), and encodes the
// result; code importing math/big runs its calls on a goroutine of their own, so that native
// work past the deadline cannot hold the caller. Interpreters beyond the first idle for
// Options.IdleTimeout are ended; Close ends them all (see pool.go). Test runs acceptance tests
// with a native testing.T and testify's assert/require. Guest code reaches the host only through forge/host, backed by sandbox.Host.
//
// Isolation (Options.Isolation, or a Source's or Input's Limits.Isolation "process"): Compile only
// parses (with sandbox.ParseFile's bounds) and gates the code in the host; a worker process of
// its own (one program and memory cap per worker, never shared) type-checks, compiles and
// initializes it and serves its calls and tests. The worker binary is found through
// WorkerConfig (Command, Path), $FORGE_WORKER, this executable when its main called
// MaybeServeWorker, or `forge` on PATH. A worker's death is classified by its cause (see
// death.classify): what the code did is the code's error, anything else KindInternal. Closing
// (or dropping) the last live program of a code stops its workers; idle workers beyond a
// program's most recently used one stop after Options.IdleTimeout.
package yaegi

// Package wasm is the hard-isolation sandbox backend: generated Go runs as WebAssembly under
// wazero, in the forge's process but with no filesystem, environment, sockets or clock of the
// host, a memory cap, and a deadline that always stops it.
//
// Compile turns an artifact into a module once per generation: the artifact file (package
// artifact), a generated dispatcher that decodes JSON args into the real parameter types, and a
// package main exporting forge_setup, forge_alloc and forge_call (//go:wasmexport) are built with
// the machine's Go toolchain as a wasip1 reactor (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared;
// the artifact's package with the inliner's -l=4, guestGcflags), then instrumented with fuel
// metering (instrument.go). A signature of basic types, slices and
// string-keyed maps of them gets the lean dispatcher (lean.go, internal/lean): its own JSON codec,
// byte-identical to encoding/json, so the module links neither encoding/json nor (unless the code
// does) fmt, and its compiled code is about half the size; an argument the lean decoder is not
// sure of is decoded by the host with encoding/json. Modules are cached on disk gzip-compressed by
// content hash and wazero caches their machine code, so a process that restarts has a cached
// module answering in under 100 ms; concurrent Compiles of one artifact share one build.
//
// Run takes an instance from the program's pool (one instance per goroutine; a trapped, exited or
// stopped instance is closed and replaced), writes the framed args into guest memory, calls
// forge_call and reads the tagged result. Guest code reaches the host only through forge/host
// (HTTP, Log, Now, Rand, Call), //go:wasmimport functions that pass JSON through guest memory to
// the same sandbox.Host, the one implementation of the capability policy, that the yaegi backend
// uses. The policy gate is the one both backends share (sandbox/gate.Check), so both backends
// accept and refuse the same programs with the same error kinds.
//
// Before wazero compiles a module, checkModule refuses one over MaxModuleBytes, MaxFunctions or
// MaxFunctionBytes (KindCompile); a compile is shared by every concurrent caller of the same
// module (by content hash), different modules compile in parallel (at most max(2, GOMAXPROCS) at
// once), and each compile is bounded by CompileTimeout. Fuel metering charges loop headers and,
// by size, bulk memory operations (copy, clear), so a deadline stops any guest within a few ms.
//
// Limits map onto the module: Limits.MemoryBytes is the runtime's memory cap (one wazero runtime
// per cap), Limits.MaxDepth the guest's Go stack cap, Limits.Timeout the context the fuel tick
// checks, Limits.OutputBytes the result size. Test runs acceptance tests with the real testing
// package and testify compiled into the module (test instances read the real clock and random
// source, which test files may use), in wazero's interpreter first (it starts a
// one-off test module far sooner) and again compiled for any test that hit its deadline there.
//
// Built modules and compiled code live under Options.CacheDir/wasm; PruneCache removes what was
// not used for a while (forge prune). The cache is not trusted: a module or a file of compiled
// code is used only if its SHA-256 matches the record this package wrote under Options.RecordDir
// (records.go), and wazero loads compiled code only from a private staging directory into which
// each verified file is linked (codecache.go). No link inside the cache is followed.
package wasm

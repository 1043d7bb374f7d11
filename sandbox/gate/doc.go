// Package gate is the policy both sandbox backends share: what generated code (and the acceptance
// tests written for it) may import, reference and declare, checked on the parsed file before
// anything is compiled. Backends differ in how they run code; they must not differ in what they
// accept. sandbox/yaegi and sandbox/wasm both call Check (and CheckTestBoundary for a test run)
// on their parse result, and neither imports the other.
//
// The allowlist (zz_allowlist.go: import path -> exported names) is generated with the yaegi
// symbol tables by sandbox/yaegi/symbols/gen, from the tables themselves: a name the interpreter
// lacks is refused here for every backend, so the wasm backend (which compiles against the full
// standard library) cannot accept what the interpreter refuses. The host API list (HostAPI), the
// names models use without importing (StdImport) and the whole-file rules (no dot imports, no
// directives, no go statements, no package-level shadowing of predeclared names, nothing named
// like the sandbox's own generated code) live here for the same reason.
//
// A test file (Options.Test) is the contract author's code, not the model's: it may also import
// testing, testify and math/rand and call time.Now and time.Since, and nothing else that is
// refused. CheckTestBoundary keeps the artifact from reaching test-only code.
package gate

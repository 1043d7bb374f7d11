package wasm

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// guestVersion changes whenever the generated guest code changes, so cached modules built from an
// older wrapper are never reused.
const guestVersion = "forge-wasm-guest-12"

// guestGcflags compiles the artifact's package with the inliner's -l=4: a call inside a function
// costs it 1 instead of 57 of the inlining budget of 80, so small functions that call others
// (recursive ones: one level of their recursion) are inlined too. A call is dear in Go's wasm code
// (the frame in linear memory, the resumable-call dispatch, a fuel check at each entry): recursive
// fib ran 6.6x native without, 3.9x with (README, "Speed"). Inlining keeps Go's semantics, and
// runtime.CallersFrames still reports inlined frames (panic lines). Only the artifact's package:
// the runtime does not build with it (write barriers inlined where they are prohibited), and the
// standard library gained nothing measurable (JSON, maps, strings, allocation) while it would
// leave the toolchain's cache of it cold.
const guestGcflags = "-gcflags=forge/artifact=-l=4"

// guestModule is the Go module the build step writes for one artifact: module "forge" with the
// artifact in forge/artifact, the host shim in forge/host and the exports in package main.
type guestModule struct {
	files map[string]string // relative path -> content
}

// normalizePackage is guestgen.NormalizePackage.
func normalizePackage(code string) (string, *ast.File, *token.FileSet, error) {
	return guestgen.NormalizePackage(code)
}

// callGuest generates the module that serves calls of sig's function in code (already normalized
// to package artifact).
//
// A signature whose types forge/lean covers gets the lean dispatcher (no encoding/json, and no fmt
// unless the code links it anyway); any other the encoding/json one.
func callGuest(code string, sig sandbox.Signature) guestModule {
	g := guestModule{files: map[string]string{
		"go.mod":               "module forge\n\ngo 1.24\n",
		"main.go":              mainSource(false, nil),
		"host/host.go":         guestgen.HostAPISource,
		"host/transport.go":    guestgen.WasmTransportSource,
		"artifact/artifact.go": code,
	}}
	if !noLean && leanSignature(sig) {
		g.files["lean/lean.go"] = leanSource
		g.files["artifact/forge__call.go"] = leanDispatcherSource(sig, panicNeedsFmt(code))
	} else {
		g.files["argdecode/argdecode.go"] = sandbox.ArgDecoderSource("argdecode")
		g.files["artifact/forge__call.go"] = guestgen.DispatcherSource(sig)
	}
	return g
}

// testGuest generates the module that runs the TestXxx functions of tests (normalized to package
// artifact) against code, with the real testing package and testify (guestgen.Testify: its copy
// without the HTTP assertions).
func testGuest(code, tests string, names []string, testify guestgen.Testify) guestModule {
	g := guestModule{files: map[string]string{
		"go.mod":                  testify.GoMod,
		"main.go":                 mainSource(true, names),
		"host/host.go":            guestgen.HostAPISource,
		"host/transport.go":       guestgen.WasmTransportSource,
		"artifact/artifact.go":    code,
		"artifact/acceptance.go":  tests,
		"artifact/forge__call.go": "package artifact\n\n// Forge__Loaded keeps package main's import of the artifact when there are no tests.\nfunc Forge__Loaded() {}\n",
	}}
	for p, src := range testify.Files {
		g.files[p] = src
	}
	return g
}

// noLean makes every call guest use the encoding/json dispatcher (tests compare the two).
var noLean bool

// key is the content hash that names the module in the build cache.
func (g guestModule) key(goVersion string) string {
	return guestgen.ModuleKey(guestVersion+"\x00"+goVersion+"\x00", g.files)
}

// mainSource is package main: the reactor's exports. The host writes a call's framed args into the
// input buffer (forge_setup returns where it is; forge_alloc grows it) and calls forge_call, which
// returns the address and length of the tagged result ('v' + JSON value, 'e' + JSON error, or,
// from the lean dispatcher, 'a' + the little-endian uint32 index of an argument it hands back to
// the host).
// forge_tick is the metering hook the instrumenter calls (see instrumentFuel); referencing it here
// keeps the import in the binary.
func mainSource(test bool, names []string) string {
	var b strings.Builder
	b.WriteString(`package main

import (
	"unsafe"

	"forge/artifact"
`)
	if test {
		b.WriteString("\t\"flag\"\n\t\"io\"\n\t\"os\"\n\t\"reflect\"\n\t\"regexp\"\n\t\"testing\"\n\t\"time\"\n")
	}
	b.WriteString(`)

// setMaxStack is runtime/debug.SetMaxStack's implementation in the runtime: importing
// runtime/debug would link os and fmt (its package's dependencies) into every module.
//
//go:linkname setMaxStack runtime/debug.setMaxStack
func setMaxStack(int) int

var (
	input  = make([]byte, 64<<10)
	output []byte
	never  bool
)

//go:wasmimport forge tick
func tick()

func pack(b []byte) uint64 {
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))<<32 | uint64(len(b))
}

//go:wasmexport forge_setup
func forgeSetup(stack uint64) uint64 {
	if never {
		tick()
	}
	if stack > 0 {
		setMaxStack(int(stack))
	}
`)
	b.WriteString(`	return pack(input[:cap(input)])
}

//go:wasmexport forge_alloc
func forgeAlloc(n uint32) uint64 {
	if int(n) > cap(input) {
		input = make([]byte, n)
	}
	return pack(input[:cap(input)])
}

`)
	if !test {
		b.WriteString(`
var maxStack uint64

// forge_call's input starts with the call's stack cap (little-endian uint64), then the framed args.
//
//go:wasmexport forge_call
func forgeCall(n uint32) uint64 {
	ms := uint64(input[0]) | uint64(input[1])<<8 | uint64(input[2])<<16 | uint64(input[3])<<24 |
		uint64(input[4])<<32 | uint64(input[5])<<40 | uint64(input[6])<<48 | uint64(input[7])<<56
	if ms != maxStack && ms > 0 {
		setMaxStack(int(ms))
		maxStack = ms
	}
	// input[8:n:n]: no capacity past this call's args (the buffer is reused across callers).
	output = artifact.Forge__Call(input[8:n:n])
	return pack(output)
}
`)
	}
	if test {
		b.WriteString("\nvar _ = artifact.Forge__Loaded\n\nvar tests = []testing.InternalTest{\n")
		for _, n := range names {
			fmt.Fprintf(&b, "\t{Name: %q, F: func(t *testing.T) { os.Stdout = os.Stderr; defer restore(); artifact.%s(t) }},\n", n, n)
		}
		b.WriteString(testRunnerSource)
	}
	b.WriteString("\nfunc main() {}\n")
	return b.String()
}

// testRunnerSource runs tests with the real testing package: testing.MainStart with a minimal
// testDeps (what go test's generated main passes; its method set follows the toolchain, hence the
// Go version in the module's cache key) and -test.v, so the host reads each test's verdict and
// messages from the report on stdout (the artifact prints on stderr meanwhile). An instance runs M.Run once (testing keeps state across runs).
const testRunnerSource = `}

// report is fd 1, testing's report; while a test function runs os.Stdout is fd 2 (testing keeps
// the file it found when M.Run started), so what the artifact prints there (as println's) never
// reads as testing's own verdict ("--- PASS: TestX").
var report = os.Stdout

func restore() { os.Stdout = report }

` + guestgen.TestDepsSource + `
// forge_test runs the tests whose names match the pattern in the input buffer; it returns
// testing's exit code (0: all passed).
//
//go:wasmexport forge_test
func forgeTest(n uint32) uint32 {
	os.Args = []string{"artifact.test"}
	m := testing.MainStart(deps{}, tests, nil, nil, nil)
	flag.Set("test.run", string(input[:n]))
	flag.Set("test.v", "true")
	code := m.Run()
	os.Stdout.Sync()
	return uint32(code)
}
`

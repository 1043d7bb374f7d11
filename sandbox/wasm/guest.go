package wasm

import (
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strconv"
	"strings"

	"github.com/artifactforge/forge/sandbox"
)

// guestVersion changes whenever the generated guest code changes, so cached modules built from an
// older wrapper are never reused.
const guestVersion = "forge-wasm-guest-11"

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

// normalizePackage returns code with its package clause set to package artifact (a missing clause
// is added on the first line, so line numbers do not move).
func normalizePackage(code string) (string, *ast.File, *token.FileSet, error) {
	fset := token.NewFileSet()
	f, parsed, err := sandbox.ParseFile(fset, code)
	if err != nil {
		return "", nil, nil, err
	}
	if f.Name.Name == sandbox.PackageName {
		return parsed, f, fset, nil
	}
	start := fset.Position(f.Name.Pos()).Offset
	end := fset.Position(f.Name.End()).Offset
	fset = token.NewFileSet()
	f, parsed, err = sandbox.ParseFile(fset, parsed[:start]+sandbox.PackageName+parsed[end:])
	if err != nil {
		return "", nil, nil, err
	}
	return parsed, f, fset, nil
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
		"host/host.go":         hostShimSource,
		"artifact/artifact.go": code,
	}}
	if !noLean && leanSignature(sig) {
		g.files["lean/lean.go"] = leanSource
		g.files["artifact/forge__call.go"] = leanDispatcherSource(sig, panicNeedsFmt(code))
	} else {
		g.files["argdecode/argdecode.go"] = sandbox.ArgDecoderSource("argdecode")
		g.files["artifact/forge__call.go"] = dispatcherSource(sig)
	}
	return g
}

// testGuest generates the module that runs the TestXxx functions of tests (normalized to package
// artifact) against code, with the real testing package and testify.
func testGuest(code, tests string, names []string, testifyVersion string) guestModule {
	return guestModule{files: map[string]string{
		"go.mod":                  "module forge\n\ngo 1.24\n\nrequire github.com/stretchr/testify " + testifyVersion + "\n",
		"main.go":                 mainSource(true, names),
		"host/host.go":            hostShimSource,
		"artifact/artifact.go":    code,
		"artifact/acceptance.go":  tests,
		"artifact/forge__call.go": "package artifact\n\n// Forge__Loaded keeps package main's import of the artifact when there are no tests.\nfunc Forge__Loaded() {}\n",
	}}
}

// noLean makes every call guest use the encoding/json dispatcher (tests compare the two).
var noLean bool

// key is the content hash that names the module in the build cache.
func (g guestModule) key(goVersion string) string {
	paths := make([]string, 0, len(g.files))
	for p := range g.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString(guestVersion + "\x00" + goVersion + "\x00")
	for _, p := range paths {
		fmt.Fprintf(&b, "%s\x00%d\x00%s\x00", p, len(g.files[p]), g.files[p])
	}
	return sandbox.Source{Code: b.String()}.Checksum()
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
			fmt.Fprintf(&b, "\t{Name: %q, F: artifact.%s},\n", n, n)
		}
		b.WriteString(testRunnerSource)
	}
	b.WriteString("\nfunc main() {}\n")
	return b.String()
}

// testRunnerSource runs tests with the real testing package: testing.MainStart with a minimal
// testDeps (what go test's generated main passes; its method set follows the toolchain, hence the
// Go version in the module's cache key) and -test.v, so the host reads each test's verdict and
// messages from the report on stdout. An instance runs M.Run once (testing keeps state across runs).
const testRunnerSource = `}

type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

type deps struct{}

func (deps) ImportPath() string                          { return "forge/artifact" }
func (deps) ModulePath() string                          { return "forge" }
func (deps) MatchString(pat, str string) (bool, error)   { return regexp.MatchString(pat, str) }
func (deps) SetPanicOnExit0(bool)                        {}
func (deps) StartCPUProfile(io.Writer) error             { return nil }
func (deps) StopCPUProfile()                             {}
func (deps) StartTestLog(io.Writer)                      {}
func (deps) StopTestLog() error                          { return nil }
func (deps) WriteProfileTo(string, io.Writer, int) error { return nil }
func (deps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return nil
}
func (deps) RunFuzzWorker(func(corpusEntry) error) error                { return nil }
func (deps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error)   { return nil, nil }
func (deps) CheckCorpus([]any, []reflect.Type) error                    { return nil }
func (deps) ResetCoverage()                                             {}
func (deps) SnapshotCoverage()                                          {}
func (deps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}

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

// dispatcherSource generates artifact.Forge__Call for sig: it lives in package artifact so that
// parameter types declared in the file (exported or not) need no qualification. Args arrive framed
// (per parameter a little-endian uint32 length, then the JSON; length 0 means absent).
func dispatcherSource(sig sandbox.Signature) string {
	var b strings.Builder
	b.WriteString(`package artifact

import (
	forge__json "encoding/json"
	forge__args "forge/argdecode"
	forge__fmt "fmt"
	forge__runtime "runtime"
	forge__strconv "strconv"
	forge__strings "strings"
	forge__utf8 "unicode/utf8"
)

// UnmarshalArg is unused by functions without parameters.
var _ = forge__args.UnmarshalArg

type forge__error struct {
	Kind    string ` + "`json:\"kind\"`" + `
	Message string ` + "`json:\"message\"`" + `
	Hint    string ` + "`json:\"hint,omitempty\"`" + `
	Param   string ` + "`json:\"param,omitempty\"`" + `
	Line    int    ` + "`json:\"line,omitempty\"`" + `
}

func forge__fail(e forge__error) []byte {
	e.Message = forge__cap(e.Message)
	out, _ := forge__json.Marshal(e)
	return append([]byte{'e'}, out...)
}

func forge__ok(v any) []byte {
	switch x := v.(type) {
	case int:
		return forge__strconv.AppendInt([]byte{'v'}, int64(x), 10)
	case int64:
		return forge__strconv.AppendInt([]byte{'v'}, x, 10)
	case int32:
		return forge__strconv.AppendInt([]byte{'v'}, int64(x), 10)
	case bool:
		return forge__strconv.AppendBool([]byte{'v'}, x)
	case string:
		if forge__plain(x) {
			out := make([]byte, 0, len(x)+3)
			out = append(out, 'v', '"')
			out = append(out, x...)
			return append(out, '"')
		}
	}
	out, err := forge__json.Marshal(v)
	if err != nil {
		return forge__fail(forge__error{Kind: "result", Message: forge__fmt.Sprintf("encode ` + sig.Result + ` result: %v", err),
			Hint: "return JSON-encodable values (no NaN/Inf, funcs, channels or cyclic pointers)"})
	}
	return append([]byte{'v'}, out...)
}

// forge__cap bounds an error or panic text as sandbox.CapMessage does, before it is encoded, so
// the host never parses more than about sandbox.MaxErrorBytes of it.
func forge__cap(s string) string {
	const max = ` + strconv.Itoa(sandbox.MaxErrorBytes) + `
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > max-4 && !forge__utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + forge__fmt.Sprintf(` + "`" + sandbox.CapMarker + "`" + `, len(s)-cut)
}

// forge__panicLine finds the artifact line a recovered panic came from.
func forge__panicLine() int {
	pcs := make([]uintptr, 32)
	n := forge__runtime.Callers(3, pcs)
	frames := forge__runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if forge__strings.HasSuffix(f.File, "/artifact/artifact.go") {
			return f.Line
		}
		if !more {
			return 0
		}
	}
}

// forge__plain reports whether s needs no JSON escaping (printable ASCII without " \\ < > &).
func forge__plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// forge__int parses a plain JSON integer; anything else goes through encoding/json.
func forge__int(raw []byte) (int64, bool) {
	if len(raw) == 0 || len(raw) > 18 {
		return 0, false
	}
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	if len(raw) == 0 || (raw[0] == '0' && len(raw) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// forge__str reads a JSON string without escapes; anything else goes through encoding/json.
func forge__str(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return "", false
		}
	}
	return string(s), true
}

func forge__arg(in []byte) (arg, rest []byte) {
	if len(in) < 4 {
		return nil, nil
	}
	n := int(in[0]) | int(in[1])<<8 | int(in[2])<<16 | int(in[3])<<24
	return in[4 : 4+n : 4+n], in[4+n:] // no capacity past the argument's end
}

func Forge__Call(in []byte) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			out = forge__fail(forge__error{Kind: "panic", Message: forge__fmt.Sprint("panic: ", r), Line: forge__panicLine()})
		}
	}()
	var raw []byte
`)
	args := make([]string, len(sig.Params))
	for i, p := range sig.Params {
		fmt.Fprintf(&b, "\tvar a%d %s\n\traw, in = forge__arg(in)\n", i, p.Type)
		switch p.Type {
		case "int", "int64":
			fmt.Fprintf(&b, "\tif v, ok := forge__int(raw); ok {\n\t\ta%d, raw = %s(v), nil\n\t}\n", i, p.Type)
		case "string":
			fmt.Fprintf(&b, "\tif v, ok := forge__str(raw); ok {\n\t\ta%d, raw = v, nil\n\t}\n", i)
		case "bool":
			fmt.Fprintf(&b, "\tif s := string(raw); s == \"true\" || s == \"false\" {\n\t\ta%d, raw = s == \"true\", nil\n\t}\n", i)
		}
		fmt.Fprintf(&b, "\tif len(raw) > 0 {\n\t\tif err := forge__args.UnmarshalArg(raw, &a%d); err != nil {\n", i)
		fmt.Fprintf(&b, "\t\t\treturn forge__fail(forge__error{Kind: \"args\", Param: %s, Message: %s + err.Error()})\n\t\t}\n\t}\n",
			strconv.Quote(p.Name), strconv.Quote("want "+p.Type+": "))
		args[i] = fmt.Sprintf("a%d", i)
	}
	b.WriteString("\t_ = raw\n")
	call := sig.Func + "(" + strings.Join(args, ", ")
	if sig.Variadic {
		call += "..."
	}
	call += ")"
	switch sig.Shape {
	case sandbox.ResultNone:
		fmt.Fprintf(&b, "\t%s\n\treturn forge__ok(nil)\n", call)
	case sandbox.ResultValue:
		fmt.Fprintf(&b, "\treturn forge__ok(%s)\n", call)
	case sandbox.ResultError:
		fmt.Fprintf(&b, "\tif err := %s; err != nil {\n\t\treturn forge__fail(forge__error{Kind: \"returned\", Message: err.Error()})\n\t}\n\treturn forge__ok(nil)\n", call)
	case sandbox.ResultValueError:
		fmt.Fprintf(&b, "\tr, err := %s\n\tif err != nil {\n\t\treturn forge__fail(forge__error{Kind: \"returned\", Message: err.Error()})\n\t}\n\treturn forge__ok(r)\n", call)
	}
	b.WriteString("}\n")
	return b.String()
}

// hostShimSource is forge/host inside the module: the same surface as the yaegi backend's, each
// function a JSON request through guest memory to the host's forge.host import, which serves it
// with sandbox.Host (one implementation of the policy, two transports).
const hostShimSource = `// Package host is the forge host API as guest code sees it.
package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unsafe"
)

// Request is an HTTP request made through the host.
type Request struct {
	Method string            ` + "`json:\"method\"`" + `
	URL    string            ` + "`json:\"url\"`" + `
	Header map[string]string ` + "`json:\"header,omitempty\"`" + `
	Body   string            ` + "`json:\"body,omitempty\"`" + `
}

// Response is what the host returns for an HTTP request.
type Response struct {
	Status int               ` + "`json:\"status\"`" + `
	Header map[string]string ` + "`json:\"header,omitempty\"`" + `
	Body   string            ` + "`json:\"body\"`" + `
}

//go:wasmimport forge host
func hostCall(op uint32, ptr unsafe.Pointer, n uint32) uint32

//go:wasmimport forge take
func hostTake(ptr unsafe.Pointer)

const (
	opHTTP uint32 = iota + 1
	opLog
	opNow
	opRand
	opRandIntn
	opCall
)

type reply struct {
	Value json.RawMessage ` + "`json:\"v\"`" + `
	Err   string          ` + "`json:\"e\"`" + `
}

func roundTrip(op uint32, req []byte) (json.RawMessage, error) {
	var p unsafe.Pointer
	if len(req) > 0 {
		p = unsafe.Pointer(&req[0])
	}
	n := hostCall(op, p, uint32(len(req)))
	buf := make([]byte, n)
	if n > 0 {
		hostTake(unsafe.Pointer(&buf[0]))
	}
	var r reply
	if err := json.Unmarshal(buf, &r); err != nil {
		return nil, fmt.Errorf("host: bad reply: %w", err)
	}
	if r.Err != "" {
		return r.Value, errors.New(r.Err)
	}
	return r.Value, nil
}

// Do performs req if the role may reach its host.
func Do(req Request) (Response, error) {
	b, _ := json.Marshal(req)
	v, err := roundTrip(opHTTP, b)
	var resp Response
	if len(v) > 0 {
		_ = json.Unmarshal(v, &resp)
	}
	return resp, err
}

// Get fetches url and returns its body.
func Get(url string) (string, error) {
	resp, err := Do(Request{Method: "GET", URL: url})
	return resp.Body, err
}

// Log records a log line.
func Log(msg string) { _, _ = roundTrip(opLog, []byte(msg)) }

// Logf records a formatted log line.
func Logf(format string, args ...any) { Log(fmt.Sprintf(format, args...)) }

// Now returns the wall clock.
func Now() time.Time {
	v, err := roundTrip(opNow, nil)
	if err != nil {
		return time.Time{}
	}
	var ns int64
	_ = json.Unmarshal(v, &ns)
	return time.Unix(0, ns).UTC()
}

// Rand returns a pseudo-random float64 in [0, 1).
func Rand() float64 {
	v, _ := roundTrip(opRand, nil)
	var f float64
	_ = json.Unmarshal(v, &f)
	return f
}

// RandIntn returns a pseudo-random int in [0, n).
func RandIntn(n int) int {
	b, _ := json.Marshal(n)
	v, err := roundTrip(opRandIntn, b)
	if err != nil && n <= 0 {
		panic(err.Error())
	}
	var i int
	_ = json.Unmarshal(v, &i)
	return i
}

type callReq struct {
	Role   string          ` + "`json:\"role\"`" + `
	Method string          ` + "`json:\"method\"`" + `
	Args   json.RawMessage ` + "`json:\"args\"`" + `
}

func call(role, method string, args any) (json.RawMessage, error) {
	a, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("host.Call %s.%s: encode args: %w", role, method, err)
	}
	b, _ := json.Marshal(callReq{Role: role, Method: method, Args: a})
	return roundTrip(opCall, b)
}

// Call delegates role.method to the forge and returns its JSON result text.
func Call(role, method string, args any) (string, error) {
	v, err := call(role, method, args)
	return string(v), err
}

// CallInto delegates role.method and decodes its result into out.
func CallInto(role, method string, args any, out any) error {
	v, err := call(role, method, args)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(v, out); err != nil {
		return fmt.Errorf("host.CallInto %s.%s: decode result: %w", role, method, err)
	}
	return nil
}
`

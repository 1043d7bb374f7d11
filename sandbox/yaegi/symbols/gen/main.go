// Command gen writes the yaegi symbol tables of the packages sandboxed code may import: the
// allowlist below, minus the symbols that reach the host (clock, sleep, timers, files), with no
// package variable exported by address (noHostState: immutable ones by value, mutable ones into
// Copies, which interpreters get deep copies of). Run it with
// `go generate ./sandbox/yaegi/symbols` after changing the list or the Go version; review the diff.
//
// It also writes sandbox/gate/zz_allowlist.go: the same allowlist as plain data (import path ->
// exported names, test-only flag), read from the generated tables themselves, so that the policy
// gate both backends share refuses exactly the symbols the yaegi tables lack.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/traefik/yaegi/extract"
)

// pkg is one allowed package and the symbols withheld from it (regexps matched against the
// whole symbol name).
type pkg struct {
	path    string
	exclude []string
	test    bool // only for acceptance tests (testify)
	// replace gives a symbol another value (a Go expression): functions that hand out host state.
	replace map[string]string
	// add gives the table unexported names (a Go expression each) that only the rewrite emits:
	// guest code cannot name them (the gate allows exported names only).
	add map[string]string
}

// allowed is the reviewed allowlist: pure computation only. The why of each exclusion is in
// sandbox/gate/policy.go (deniedSymbols), which also tells generated code what to use instead.
var allowed = []pkg{
	{path: "bufio"},
	{path: "bytes"},
	{path: "container/heap"},
	{path: "container/list"},
	{path: "container/ring"},
	{path: "crypto/md5"},
	{path: "crypto/sha1"},
	{path: "crypto/sha256"},
	{path: "crypto/sha512"},
	{path: "encoding/base32"},
	{path: "encoding/base64"},
	{path: "encoding/binary"},
	{path: "encoding/csv"},
	{path: "encoding/hex"},
	// Unmarshal and Decoder.Decode consult the host's time.Local for the times they decode: the
	// guest's zone instead (symbols.ZonesOf; RATIONALE, "In-process yaegi: time zone and
	// write-check siblings"). The Decoder is a type of the sandbox's (symbols/internal/json), so
	// that a method value or expression of Decode is the fixed one too.
	{path: "encoding/json", replace: map[string]string{"Unmarshal": "guestUnmarshal", "NewDecoder": "newJSONDecoder", "Decoder": "(*jsonDecoder)(nil)"}},
	{path: "errors"},
	{path: "fmt", exclude: []string{"^Print", "^Scan"}},
	{path: "hash"},
	// MakeTable(IEEE) and MakeTable(Castagnoli) return the package's own tables, which guest
	// code could then write: each call gets a copy (Checksum takes its slower generic path).
	{path: "hash/crc32", replace: map[string]string{"MakeTable": "func(poly uint32) *crc32.Table { t := *crc32.MakeTable(poly); return &t }"}},
	{path: "hash/fnv"},
	{path: "html"},
	{path: "io", exclude: []string{"^Pipe", "^PipeReader$", "^PipeWriter$"}},
	{path: "math"},
	{path: "math/big"},
	{path: "math/bits"},
	{path: "math/cmplx"},
	{path: "net/url"},
	{path: "regexp"},
	// Compile hands out the package's own rune slices for . (Inst.Rune), which guest code could
	// then write, changing what . matches in every regexp the process compiles after: each
	// program gets copies (syntax.go).
	{path: "regexp/syntax", replace: map[string]string{"Compile": "syntaxCompile"}},
	{path: "sort"},
	{path: "strconv"},
	{path: "strings"},
	// A Scanner's nil Error field reports to os.Stderr: the rewrite keeps it non-nil (scanner.go).
	{path: "text/scanner", add: map[string]string{"forge__init": "scannerInit", "forge__initFunc": "scannerInitFunc", "forge__error": "scannerError"}},
	// Unix, UnixMilli, UnixMicro and Parse locate their times in the host's time.Local: in the
	// guest's zone instead (tz.go); FixedZone("", 0) and ParseInLocation's unnamed zone at offset
	// 0 are the guest's own zone, told apart from the one a decoder gives; and the rewrite's
	// helpers for Time.Local and the Unmarshal methods are added.
	{path: "time", exclude: []string{"^Sleep$", "^After$", "^AfterFunc$", "^Tick$", "^NewTicker$", "^NewTimer$", "^Now$", "^Since$", "^Until$", "^LoadLocation$", "^Local$"},
		replace: map[string]string{"Unix": "guestUnix", "UnixMilli": "guestUnixMilli", "UnixMicro": "guestUnixMicro", "Parse": "guestParse",
			"FixedZone": "guestFixedZone", "ParseInLocation": "guestParseInLocation"},
		add: map[string]string{"forge__local": "guestLocal", "forge__localFunc": "guestLocalFunc", "forge__fixed": "guestFixed"}},
	{path: "unicode"},
	{path: "unicode/utf16"},
	{path: "unicode/utf8"},
	// Acceptance tests only: random inputs are fine in tests (artifacts get host.Rand instead).
	// Seed is a no-op whatever the host's GODEBUG says (Go 1.24's default): with
	// randseednop=0 it would reseed the process's source every program and the host share. The
	// top-level functions draw from a generator of the sandbox's own (rand.go), not the
	// process's global source (shared with the host under GODEBUG=randautoseed=0).
	{path: "math/rand", test: true, exclude: []string{"^Read$"}, replace: map[string]string{"Seed": "func(seed int64) {}",
		"ExpFloat64": "testRand.ExpFloat64", "Float32": "testRand.Float32", "Float64": "testRand.Float64",
		"Int": "testRand.Int", "Int31": "testRand.Int31", "Int31n": "testRand.Int31n", "Int63": "testRand.Int63",
		"Int63n": "testRand.Int63n", "Intn": "testRand.Intn", "NormFloat64": "testRand.NormFloat64",
		"Perm": "testRand.Perm", "Shuffle": "testRand.Shuffle", "Uint32": "testRand.Uint32", "Uint64": "testRand.Uint64"}},
	// Acceptance tests only: files, directories, HTTP servers and the polling helpers (which start
	// goroutines running guest code) are withheld.
	{path: "github.com/stretchr/testify/assert", test: true, exclude: []string{"File", "Dir", "HTTP", "Eventually", "Never", "CallerInfo"}},
	{path: "github.com/stretchr/testify/require", test: true, exclude: []string{"File", "Dir", "HTTP", "Eventually", "Never"}},
}

func main() {
	var paths []string
	names := map[string][]string{}
	for _, p := range allowed {
		var buf bytes.Buffer
		var err error
		e := extract.Extractor{Dest: "symbols", Exclude: p.exclude}
		if _, err = e.Extract(p.path, "", &buf); err != nil {
			log.Fatalf("extract %s: %v", p.path, err)
		}
		src := buf.Bytes()
		// The yaegi template still writes the legacy "+build" line; the version tag it carries is
		// not wanted (the table is regenerated per Go release instead).
		src = regexp.MustCompile(`(?m)^// \+build .*\n|^//go:build .*\n`).ReplaceAll(src, nil)
		src = bytes.Replace(src, []byte("// Code generated by 'yaegi extract "), []byte("// Code generated by sandbox/yaegi/symbols/gen from 'yaegi extract "), 1)
		for name, expr := range p.replace {
			re := regexp.MustCompile(`(?m)^(\t\t"` + name + `":\s+)reflect\.ValueOf\(.*\),$`)
			if !re.Match(src) {
				log.Fatalf("%s: no symbol %s to replace", p.path, name)
			}
			src = re.ReplaceAllLiteral(src, []byte("\t\t\""+name+"\": reflect.ValueOf("+expr+"),"))
		}
		if len(p.add) > 0 {
			open := regexp.MustCompile(`(?m)^\tSymbols\["[^"]+"\] = map\[string\]reflect\.Value\{\n`)
			loc := open.FindIndex(src)
			if loc == nil {
				log.Fatalf("%s: no Symbols table to add to", p.path)
			}
			var lines []string
			for name, expr := range p.add {
				lines = append(lines, fmt.Sprintf("\t\t%q: reflect.ValueOf(%s),\n", name, expr))
			}
			sort.Strings(lines)
			added := "\t\t// for the rewrite only (unexported: guest code cannot name them)\n" + strings.Join(lines, "")
			src = append(src[:loc[1]:loc[1]], append([]byte(added), src[loc[1]:]...)...)
		}
		for from, to := range wrapperBodies {
			if bytes.Contains(src, []byte(from)) {
				src = bytes.Replace(src, []byte(from), []byte(to), 1)
			} else if strings.Contains(from, "_"+strings.NewReplacer("/", "_").Replace(p.path)+"_") {
				log.Fatalf("%s: wrapper method to replace not found:\n%s", p.path, from)
			}
		}
		if src, err = ownBytes(src); err != nil {
			log.Fatalf("%s: %v", p.path, err)
		}
		if src, err = noHostState(p.path, src); err != nil {
			log.Fatalf("%s: %v", p.path, err)
		}
		out, err := format.Source(src)
		if err != nil {
			log.Fatalf("format %s: %v", p.path, err)
		}
		name := "zz_" + strings.NewReplacer("/", "_", ".", "_").Replace(p.path) + ".go"
		if err := os.WriteFile(name, out, 0o644); err != nil {
			log.Fatal(err)
		}
		paths = append(paths, p.path)
		if names[p.path], err = tableNames(out); err != nil {
			log.Fatalf("list %s: %v", p.path, err)
		}
	}
	sort.Strings(paths)
	var b bytes.Buffer
	b.WriteString("// Code generated by sandbox/yaegi/symbols/gen. DO NOT EDIT.\n\npackage symbols\n\n")
	b.WriteString("// Allowed lists the import paths of the generated tables (testify ones are for tests only).\nvar Allowed = map[string]bool{\n")
	for _, p := range allowed {
		fmt.Fprintf(&b, "\t%q: %v,\n", p.path, !p.test)
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(".", "zz_allowed.go"), out, 0o644); err != nil {
		log.Fatal(err)
	}
	if err := writeGateAllowlist(filepath.Join("..", "..", "gate", "zz_allowlist.go"), names); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %d tables", len(paths))
}

// tableNames lists the exported names a generated table maps (the string keys of its
// Symbols["path/name"] and Copies["path/name"] literals; not the _Iface wrapper types yaegi
// adds), sorted.
func tableNames(src []byte) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "table.go", src, 0)
	if err != nil {
		return nil, err
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		// Symbols and Copies (the mutable variables interpreters get copies of) both name what
		// guest code may reference.
		if ix, ok := as.Lhs[0].(*ast.IndexExpr); !ok || fmt.Sprint(ix.X) != "Symbols" && fmt.Sprint(ix.X) != "Copies" {
			return true
		}
		lit, ok := as.Rhs[0].(*ast.CompositeLit)
		if !ok {
			return true
		}
		for _, e := range lit.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if bl, ok := kv.Key.(*ast.BasicLit); ok {
					if s, err := strconv.Unquote(bl.Value); err == nil && token.IsExported(s) {
						names = append(names, s)
					}
				}
			}
		}
		return false
	})
	if len(names) == 0 {
		return nil, fmt.Errorf("no Symbols[...] table found in the generated source")
	}
	sort.Strings(names)
	return names, nil
}

// writeGateAllowlist writes the allowlist as plain data for package gate (no reflect, no yaegi):
// the file the wasm backend's gate reads without importing the yaegi tables.
func writeGateAllowlist(path string, names map[string][]string) error {
	var b bytes.Buffer
	b.WriteString("// Code generated by sandbox/yaegi/symbols/gen. DO NOT EDIT.\n\npackage gate\n\n")
	b.WriteString("// allowlist maps each import path generated code may use onto the exported names it may\n")
	b.WriteString("// reference (the yaegi symbol tables' keys); test-only packages are for acceptance tests.\n")
	b.WriteString("var allowlist = map[string]allowedPackage{\n")
	for _, p := range allowed {
		fmt.Fprintf(&b, "\t%q: {testOnly: %v, names: []string{", p.path, p.test)
		for i, n := range names[p.path] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", n)
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// varLine is how yaegi's extractor exports a package variable: by address, so that guest code
// reads and WRITES the host's variable (io.EOF = nil, unicode.Categories["x"] = ...).
var varLine = regexp.MustCompile(`(?m)^\t\t"(\w+)":\s+reflect\.ValueOf\(&(\w+)\.(\w+)\)\.Elem\(\),\n`)

// noHostState rewrites the variables of one extracted table so that no host state is reachable
// by reference (RATIONALE.md, "in-process containment"):
//   - a variable of interface type (the error sentinels, io.Discard) is exported by value, not
//     addressable, with its static type kept: guest code can compare and pass it but not assign
//     it. What it holds must itself be immutable (the symbols test checks every one);
//   - a variable of a basic type, or of a struct type holding no references (binary.BigEndian),
//     is exported by value;
//   - every other variable (pointers, maps, slices, arrays: unicode tables, base64/base32
//     encodings, crc32 tables, time.UTC) could be written through, so it leaves the shared table:
//     it goes into Copies, and each interpreter that references it gets its own deep copy.
func noHostState(path string, src []byte) ([]byte, error) {
	var pkg *types.Package
	var copies []string
	var err error
	out := varLine.ReplaceAllFunc(src, func(line []byte) []byte {
		m := varLine.FindSubmatch(line)
		key, qual, name := string(m[1]), string(m[2]), string(m[3])
		if pkg == nil && err == nil {
			pkg, err = importer.ForCompiler(token.NewFileSet(), "source", nil).Import(path)
		}
		if err != nil {
			return line
		}
		obj, ok := pkg.Scope().Lookup(name).(*types.Var)
		if !ok {
			err = fmt.Errorf("%s.%s: not a package variable", path, name)
			return line
		}
		t := obj.Type()
		switch u := t.Underlying().(type) {
		case *types.Interface:
			ts := types.TypeString(t, func(p *types.Package) string { return p.Name() })
			return fmt.Appendf(nil, "\t\t%q: reflect.ValueOf([1]%s{%s.%s}).Index(0), // by value: not assignable\n", key, ts, qual, name)
		case *types.Basic:
			return fmt.Appendf(nil, "\t\t%q: reflect.ValueOf(%s.%s), // by value\n", key, qual, name)
		case *types.Struct:
			if valueOnly(u) {
				return fmt.Appendf(nil, "\t\t%q: reflect.ValueOf(%s.%s), // by value: no references inside\n", key, qual, name)
			}
		}
		copies = append(copies, fmt.Sprintf("\t\t%q: &%s.%s,\n", key, qual, name))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(copies) == 0 {
		return out, nil
	}
	// The copies go into the same init function, after the Symbols table.
	table := regexp.MustCompile(`(?m)^\tSymbols\["([^"]+)"\] = map\[string\]reflect\.Value\{\n(?s:.*?)^\t\}\n`)
	loc := table.FindSubmatchIndex(out)
	if loc == nil {
		return nil, fmt.Errorf("no Symbols table in the extracted source")
	}
	key := string(out[loc[2]:loc[3]])
	var b bytes.Buffer
	b.Write(out[:loc[1]])
	fmt.Fprintf(&b, "\n\t// Mutable variables: never handed to an interpreter; each one that references a variable\n\t// gets its own deep copy (Copier.Var).\n\tCopies[%q] = map[string]any{\n", key)
	sort.Strings(copies)
	for _, c := range copies {
		b.WriteString(c)
	}
	b.WriteString("\t}\n")
	b.Write(out[loc[1]:])
	return b.Bytes(), nil
}

// wrapperBodies replaces interface wrapper methods whose native caller hands guest code a value
// the process reuses: fmt's Formatter gets fmt's pooled printer as its State, which goes stale
// when Format returns (state.go).
var wrapperBodies = map[string]string{
	"func (W _fmt_Formatter) Format(f fmt.State, verb rune) {\n\tW.WFormat(f, verb)\n}\n": "func (W _fmt_Formatter) Format(f fmt.State, verb rune) {\n\tformatCall(W.WFormat, f, verb)\n}\n",
}

// wrapperMethod is one method of an interface wrapper yaegi's extractor writes: the way native
// code calls guest code (fmt.Fprint(w) with w a guest io.Writer calls _io_Writer.Write).
var wrapperMethod = regexp.MustCompile(`(?m)^func \(W (_\w+)\) (\w+)\(([^)]*)\) ([^{]*)\{\n\t(return )?W\.W(\w+)\(([^)]*)\)\n\}\n`)

// fillMethods are the wrapper methods whose []byte argument the guest fills (Read, ReadAt,
// PutUint*): it gets a fresh buffer of the same length, copied into the caller's after the call.
var fillMethods = map[string]bool{"Read": true, "ReadAt": true, "PutUint16": true, "PutUint32": true, "PutUint64": true}

// ownBytes makes every interface wrapper hand guest code a []byte of its own, never the native
// caller's: that buffer may be a pooled one the host reuses (fmt's printers, io.Discard's
// ReadFrom buffers), which guest code could keep and read or write on a later call, seeing or
// changing what the host formats or drains meanwhile. A buffer the guest reads (Write, WriteAt,
// UnmarshalJSON, Sum's and Append's prefix, Uint16...) is copied in; one it fills (fillMethods)
// is a fresh buffer copied out after the call.
func ownBytes(src []byte) ([]byte, error) {
	var err error
	out := wrapperMethod.ReplaceAllFunc(src, func(m []byte) []byte {
		g := wrapperMethod.FindSubmatch(m)
		recv, name, params, results, ret, args := string(g[1]), string(g[2]), string(g[3]), strings.TrimSpace(string(g[4])), string(g[5]), string(g[7])
		var bytesParams []string
		for _, prm := range strings.Split(params, ",") {
			if f := strings.Fields(prm); len(f) == 2 && f[1] == "[]byte" {
				bytesParams = append(bytesParams, f[0])
			}
		}
		if len(bytesParams) == 0 {
			return m
		}
		head := fmt.Sprintf("func (W %s) %s(%s) %s {\n", recv, name, params, results)
		if !fillMethods[name] {
			a := args
			for _, b := range bytesParams {
				a = regexp.MustCompile(`\b`+b+`\b`).ReplaceAllString(a, "append([]byte(nil), "+b+"...)")
			}
			return []byte(head + "\t" + ret + "W.W" + name + "(" + a + ")\n}\n")
		}
		if len(bytesParams) != 1 {
			err = fmt.Errorf("%s.%s: want one []byte argument to fill, got %v", recv, name, bytesParams)
			return m
		}
		b := bytesParams[0]
		a := regexp.MustCompile(`\b`+b+`\b`).ReplaceAllString(args, "own")
		body := "\town := make([]byte, len(" + b + "))\n"
		switch results {
		case "":
			body += "\tW.W" + name + "(" + a + ")\n\tcopy(" + b + ", own)\n"
		case "(n int, err error)":
			body += "\tn, err = W.W" + name + "(" + a + ")\n\tcopy(" + b + ", own)\n\treturn n, err\n"
		default:
			err = fmt.Errorf("%s.%s: results %q: want none or (n int, err error)", recv, name, results)
			return m
		}
		return []byte(head + body + "}\n")
	})
	return out, err
}

// valueOnly reports whether a value of type t holds no pointer, map, slice, interface, channel or
// function: a copy of it shares nothing with the original.
func valueOnly(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Kind() != types.UnsafePointer
	case *types.Array:
		return valueOnly(u.Elem())
	case *types.Struct:
		for i := range u.NumFields() {
			if !valueOnly(u.Field(i).Type()) {
				return false
			}
		}
		return true
	}
	return false
}

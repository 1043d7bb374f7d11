package guestgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

// Testify is what a test module needs of testify: its go.mod, which requires TestifyVersion and
// replaces it with the module's own testify/ directory, and that directory's files (paths
// relative to the module). The copy is testify's assert and require packages (and what they
// import of testify) from the module cache, less the HTTP assertions (liteTestify): those are
// the only part of testify that imports net/http, which every test module linked (with
// crypto/tls, x509 and the rest of its tree) for functions the gate refuses in acceptance tests
// (gate's deniedTestMethods). Without them a test module is ~30% smaller and depends on ~90
// packages instead of ~200: less to compile on a cold machine, to link, instrument, validate
// and initialize at every Test.
type Testify struct {
	GoMod string
	Files map[string]string
}

// TestifyModule is testify's module path.
const TestifyModule = "github.com/stretchr/testify"

// testifyPackages are the packages of testify a test module may import (the gate's allowlist)
// and the ones they import; each is copied whole but for liteTestify's cuts.
var testifyPackages = []string{"assert", "assert/yaml", "internal/difflib", "internal/spew", "require"}

// testifyDownloadTimeout bounds go mod download of testify (a fresh machine fetches it from the
// module proxy, as go build did before).
const testifyDownloadTimeout = 2 * time.Minute

var testifyCache sync.Map // gobin + "\x00" + version -> Testify

// LoadTestify returns the test modules' testify for tc: testify at TestifyVersion, from the
// module cache (go mod download, which fetches it from the proxy the first time), cut by
// liteTestify. It is computed once per toolchain and version in a process.
func LoadTestify(ctx context.Context, tc Toolchain) (Testify, error) {
	version := TestifyVersion()
	key := tc.Gobin + "\x00" + version
	if t, ok := testifyCache.Load(key); ok {
		return t.(Testify), nil
	}
	dir, err := downloadTestify(ctx, tc, version)
	if err != nil {
		return Testify{}, err
	}
	files, err := readTestify(dir)
	if err != nil {
		return Testify{}, sandbox.Errorf(sandbox.KindInternal, "read testify %s from the module cache (%s): %v", version, dir, err)
	}
	files, err = liteTestify(files)
	if err != nil {
		return Testify{}, sandbox.Errorf(sandbox.KindInternal, "testify %s: %v", version, err)
	}
	t := Testify{Files: map[string]string{}, GoMod: "module forge\n\ngo 1.24\n\nrequire " + TestifyModule + " " + version +
		"\n\nreplace " + TestifyModule + " => ./testify\n"}
	for p, content := range files {
		t.Files["testify/"+p] = content
	}
	testifyCache.Store(key, t)
	return t, nil
}

// downloadTestify runs go mod download for testify at version and returns its directory in the
// module cache.
func downloadTestify(ctx context.Context, tc Toolchain, version string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, testifyDownloadTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tc.Gobin, "mod", "download", "-json", TestifyModule+"@"+version)
	cmd.Dir = os.TempDir() // outside any module
	cmd.Env = BuildEnv("GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local", "GOSUMDB=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); err != nil || jerr != nil || info.Dir == "" {
		msg := strings.TrimSpace(info.Error + " " + stderr.String())
		if msg == "" && err != nil {
			msg = err.Error()
		}
		return "", &sandbox.Error{Kind: sandbox.KindInternal, Err: err,
			Message: fmt.Sprintf("go mod download %s@%s (the testify acceptance tests are built with) failed: %s", TestifyModule, version, msg),
			Hint:    "check that the module proxy is reachable (GOPROXY) or that the module cache holds it, or use the yaegi sandbox"}
	}
	return info.Dir, nil
}

// readTestify reads testify's go.mod and the non-test Go files of testifyPackages under dir.
func readTestify(dir string) (map[string]string, error) {
	files := map[string]string{}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	files["go.mod"] = string(mod)
	for _, pkg := range testifyPackages {
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(pkg)))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(pkg), e.Name()))
			if err != nil {
				return nil, err
			}
			files[pkg+"/"+e.Name()] = string(b)
		}
	}
	return files, nil
}

// liteTestify cuts testify's HTTP assertions out of its files (paths relative to the module):
// every function and method whose name begins with HTTP (HTTPSuccess, HTTPBodyContainsf, the
// *Assertions and require forms) or whose signature takes a net/http type (their helpers), then
// the imports nothing uses any more. What is left does
// not import net/http; a file that still does is an error (a testify whose HTTP helpers moved).
func liteTestify(files map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(files))
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if path.Ext(p) != ".go" {
			out[p] = files[p]
			continue
		}
		src, err := cutHTTP(p, files[p])
		if err != nil {
			return nil, err
		}
		if src != "" {
			out[p] = src
		}
	}
	return out, nil
}

// cutHTTP removes the HTTP* functions of one file and the imports left unused; "" when nothing
// but the package clause and imports would be left.
func cutHTTP(name, src string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	httpName := ""
	for _, is := range f.Imports {
		if strings.Trim(is.Path.Value, `"`) == "net/http" {
			httpName = importName(is)
		}
	}
	var decls []ast.Decl
	var cut []ast.Node
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && (strings.HasPrefix(fd.Name.Name, "HTTP") || (httpName != "" && qualifiers(fd.Type)[httpName])) {
			cut = append(cut, fd)
			continue
		}
		decls = append(decls, d)
	}
	if len(cut) == 0 {
		if importsNetHTTP(f) {
			return "", fmt.Errorf("%s imports net/http outside the HTTP assertions", name)
		}
		return src, nil
	}
	f.Decls = decls
	// Their doc comments go with them.
	var comments []*ast.CommentGroup
	for _, c := range f.Comments {
		if !within(c, cut) {
			comments = append(comments, c)
		}
	}
	f.Comments = comments
	dropUnusedImports(f)
	if importsNetHTTP(f) {
		return "", fmt.Errorf("%s imports net/http outside the HTTP assertions", name)
	}
	if onlyImports(f) {
		return "", nil
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		return "", err
	}
	return b.String(), nil
}

// within says whether comment group c lies in one of nodes or in the doc comment right above it.
func within(c *ast.CommentGroup, nodes []ast.Node) bool {
	for _, n := range nodes {
		start := n.Pos()
		if fd, ok := n.(*ast.FuncDecl); ok && fd.Doc != nil {
			start = fd.Doc.Pos()
		}
		if c.Pos() >= start && c.End() <= n.End() {
			return true
		}
	}
	return false
}

// dropUnusedImports removes the imports of f whose name no selector uses.
func dropUnusedImports(f *ast.File) {
	used := qualifiers(f)
	keep := f.Imports[:0]
	decls := f.Decls[:0]
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			decls = append(decls, d)
			continue
		}
		specs := gd.Specs[:0]
		for _, s := range gd.Specs {
			is := s.(*ast.ImportSpec)
			if name := importName(is); name == "_" || name == "." || used[name] {
				specs = append(specs, is)
				keep = append(keep, is)
			}
		}
		gd.Specs = specs
		if len(specs) > 0 {
			decls = append(decls, gd)
		}
	}
	f.Decls, f.Imports = decls, keep
}

func importsNetHTTP(f *ast.File) bool {
	for _, is := range f.Imports {
		if p := strings.Trim(is.Path.Value, `"`); p == "net/http" || strings.HasPrefix(p, "net/http/") {
			return true
		}
	}
	return false
}

// onlyImports says whether f declares nothing but imports.
func onlyImports(f *ast.File) bool {
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); !ok || gd.Tok != token.IMPORT {
			return false
		}
	}
	return true
}

package forge

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCoreLinksNoBackendProviderOrStore (issue 26, done when): package forge links no model SDK,
// no NATS, no sandbox backend, generator or fleet store; forge/all and the binary choose those.
func TestCoreLinksNoBackendProviderOrStore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	const mod = "github.com/artifactforge/forge/"
	banned := []string{"github.com/nats-io/", "github.com/openai/", "github.com/anthropics/", "github.com/sashabaranov/",
		"github.com/tetratelabs/wazero", "github.com/traefik/yaegi",
		mod + "sandbox/wasm", mod + "sandbox/yaegi", mod + "registry/nats", mod + "forge/all",
		mod + "provider/openai", mod + "provider/anthropic", mod + "provider/command", mod + "provider/replay"}
	for _, p := range strings.Fields(string(out)) {
		for _, b := range banned {
			if strings.HasPrefix(p, b) {
				t.Errorf("package forge links %s: a backend, generator or store registers itself and forge/all (or the binary) imports it", p)
			}
		}
	}
}

// TestBackendAndProviderNamesStayHome (issue 26, done when): outside its own package, forge/all
// and the binary's imports, no code names a backend, generator or store (a string literal or an
// import; comments may). The few literals that are other things of the same name are listed.
func TestBackendAndProviderNamesStayHome(t *testing.T) {
	names := map[string]bool{"wasm": true, "yaegi": true, "openai": true, "anthropic": true, "replay": true, "nats": true, "command": true}
	home := []string{"sandbox/wasm/", "sandbox/yaegi/", "provider/openai/", "provider/anthropic/", "provider/replay/", "provider/command/",
		"registry/nats/", "forge/all/", "cmd/forge/"} // cmd/forge: the binary, which imports the set it ships
	other := map[string]string{ // file: literals that name something else
		"forge/toolformat.go": "openai anthropic", // tool-listing wire formats (ToolsOpenAI, ToolsAnthropic)
		"forge/eventjson.go":  "replay",           // the event's "replay" field
		"forge/failtype.go":   "replay",           // TypeReplay: new code answered sampled calls differently
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
		if d.IsDir() {
			if n := d.Name(); path != ".." && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			for _, h := range home {
				if rel+"/" == h {
					return filepath.SkipDir
				}
			}
			return nil
		}
		// Test code and the test packages (providertest, sandboxtest, difftest, storetest) name
		// what they test.
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.Contains(rel, "test/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, h := range home[:7] {
				if strings.HasPrefix(p+"/", "github.com/artifactforge/forge/"+h) {
					t.Errorf("%s imports %s: only forge/all and the binary import a backend, generator or store", rel, p)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !names[s] || slices.Contains(strings.Fields(other[rel]), s) {
				return true
			}
			t.Errorf("%s: %s names %q: ask the registry (sandbox.Backends, provider registration, registry.OpenBackend) instead", rel, fset.Position(lit.Pos()), s)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

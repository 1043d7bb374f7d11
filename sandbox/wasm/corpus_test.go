package wasm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// full reports whether the whole valid corpus and HumanEval-X run (FORGE_WASM_FULL=1, `make
// test-wasm`): every case builds its own module, so the default run takes a representative subset
// of the valid programs. The hostile corpus always runs whole: containment is the promise.
func full() bool { return os.Getenv("FORGE_WASM_FULL") == "1" }

// sharedSandbox hands the package's Sandbox to the corpus runner, which closes what it gets.
type sharedSandbox struct{ *Sandbox }

func (sharedSandbox) Close() error { return nil }

func newTestSandbox(*testing.T) sandbox.Sandbox { return sharedSandbox{shared} }

// subsets are the cases of the default run: every error kind the backend produces on its own
// (deadline, depth, memory, output, args, panic, result, returned), the policy gate, the host API
// and the known yaegi gaps that simply work here (gap_: the answers yaegi needs a rewrite for).
var subsets = map[string][]string{
	"valid": {"add", "generics_sum", "host_log", "json_unmarshal", "min_max_rewrite", "range_int_rewrite",
		"loopvar_rewrite", "slices_sort_rewrite", "struct_param", "variadic", "any_int_numbers", "any_nested_numbers",
		"gate_blank_and_locals_ok", "gap_methodvalue_bind", "gap_loopvar_defer", "gap_iota_multi", "gap_fmt_methods",
		"gap_json_unexported"},
}

// corpusDir returns dir itself in a full run, else a temporary copy of the subset.
func corpusDir(t *testing.T, dir, name string) string {
	if full() {
		return dir
	}
	tmp := t.TempDir()
	for _, c := range subsets[name] {
		b, err := os.ReadFile(filepath.Join(dir, c+".go"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, c+".go"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tmp
}

func TestCorpusValid(t *testing.T) {
	sandboxtest.RunCorpus(t, corpusDir(t, "../testdata/valid", "valid"), newTestSandbox)
}

// TestCorpusHostile runs every hostile program, in every run (CI included).
func TestCorpusHostile(t *testing.T) {
	sandboxtest.RunCorpus(t, "../testdata/hostile", newTestSandbox)
}

// TestCorpusWasm runs the wasm-only cases: memory bombs contained in-process by the memory cap.
func TestCorpusWasm(t *testing.T) {
	sandboxtest.RunCorpus(t, "testdata/hostile", newTestSandbox)
}

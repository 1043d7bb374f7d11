package gate_test

import (
	"path/filepath"
	"testing"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
	"github.com/artifactforge/forge/sandbox/wasm"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

// FuzzBackendsGateAlike feeds arbitrary source to both backends' gate entry points: they must
// agree on accept or refuse, and on the kind of a refusal.
func FuzzBackendsGateAlike(f *testing.F) {
	for _, dir := range []string{"hostile", "valid"} {
		cases, err := sandboxtest.LoadCorpus(filepath.Join("..", "testdata", dir))
		if err != nil {
			f.Fatal(err)
		}
		for _, c := range cases {
			f.Add(c.Code)
		}
	}
	f.Fuzz(func(t *testing.T, code string) {
		if len(code) > 1<<16 {
			return
		}
		src := sandbox.Source{Code: code}
		y, w := yaegi.Gate(src), wasm.Gate(src)
		if (y == nil) != (w == nil) || (y != nil && sandbox.AsError(y).Kind != sandbox.AsError(w).Kind) {
			t.Fatalf("gates disagree on %q:\nyaegi: %v\nwasm:  %v", code, y, w)
		}
	})
}

// FuzzBackendsGateTestsAlike does the same for a test run: an artifact and a test file through
// both backends' test gates (artifact, test file, boundary).
func FuzzBackendsGateTestsAlike(f *testing.F) {
	for _, c := range testFileCases {
		f.Add(c.artifact, c.tests)
	}
	for _, p := range sandboxtest.LoadHumanEval(f)[:20] {
		f.Add(p.Prompt+p.CanonicalSolution, p.TestSetup+"\n"+p.ExampleTest)
	}
	f.Fuzz(func(t *testing.T, artifact, tests string) {
		if len(artifact)+len(tests) > 1<<16 {
			return
		}
		src := sandbox.Source{Code: artifact}
		y, w := yaegi.GateTests(src, tests), wasm.GateTests(src, tests)
		if (y == nil) != (w == nil) || (y != nil && sandbox.AsError(y).Kind != sandbox.AsError(w).Kind) {
			t.Fatalf("test gates disagree on %q + %q:\nyaegi: %v\nwasm:  %v", artifact, tests, y, w)
		}
	})
}

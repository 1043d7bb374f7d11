package gate_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
	"github.com/artifactforge/forge/sandbox/wasm"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

// verdict is what a gate answered: "ok", or the error's kind and message.
func verdict(err error) string {
	if err == nil {
		return "ok"
	}
	e := sandbox.AsError(err)
	return string(e.Kind) + ": " + e.Message
}

// TestBackendsGateAlike runs every corpus case through both backends' gate entry points (the
// parse + normalize + policy steps of Compile, nothing built) and requires identical verdicts,
// and, for the gate_ cases, the policy refusal they expect.
func TestBackendsGateAlike(t *testing.T) {
	var cases []sandboxtest.Case
	for _, dir := range []string{"../testdata/hostile", "../testdata/valid", "../wasm/testdata/hostile"} {
		cs, err := sandboxtest.LoadCorpus(filepath.FromSlash(dir))
		require.NoError(t, err)
		cases = append(cases, cs...)
	}
	require.GreaterOrEqual(t, len(cases), 155)
	refused := 0
	for _, c := range cases {
		src := sandbox.Source{Code: c.Code, Func: c.Func}
		yerr := yaegi.Gate(src)
		y, w := verdict(yerr), verdict(wasm.Gate(src))
		assert.Equal(t, y, w, "%s: yaegi and wasm gates disagree", c.Name)
		// gate_ cases expect their policy refusal from the gate itself (other policy cases may be
		// refused at run time: a host function used without its capability).
		if strings.HasPrefix(c.Name, "gate_") && slices.Contains(c.Kinds, sandbox.KindPolicy) {
			refused++
			if assert.True(t, strings.HasPrefix(y, "policy: "), "%s: want a policy refusal, got %s", c.Name, y) && c.Contains != "" {
				assert.Contains(t, yerr.Error(), c.Contains, c.Name)
			}
		}
	}
	assert.GreaterOrEqual(t, refused, 12, "gate_ policy cases seen")
}

// TestBackendsGateHumanEvalAlike: every HumanEval-X problem (prompt + canonical solution, and its
// example test file) passes both backends' gates; real code must not trip the stricter allowlist.
func TestBackendsGateHumanEvalAlike(t *testing.T) {
	for _, p := range sandboxtest.LoadHumanEval(t) {
		src := sandbox.Source{Code: p.Prompt + p.CanonicalSolution}
		tests := p.TestSetup + "\n" + p.ExampleTest
		y, w := verdict(yaegi.GateTests(src, tests)), verdict(wasm.GateTests(src, tests))
		assert.Equal(t, "ok", y, "%s yaegi", p.TaskID)
		assert.Equal(t, "ok", w, "%s wasm", p.TaskID)
	}
}

// testFileCases are artifact + test-file pairs on the boundary of issue 14: a test may use the
// clock and math/rand; everything else refused stays refused; the artifact sees nothing that only
// the test file declares.
var testFileCases = []struct {
	name, artifact, tests, want string
}{
	{"test seeds rand from the clock", artDecode, testRandomDecode, "ok"},
	{"test measures with time.Since", artDecode, `package artifact
import ("testing"; "time")
func TestFast(t *testing.T) {
	start := time.Now()
	_ = Decode("abc")
	if time.Since(start) < 0 { t.Fatal("clock went back") }
}`, "ok"},
	{"test uses rand/v1 unseeded", artDecode, `package artifact
import ("math/rand"; "testing")
func TestR(t *testing.T) { _ = Decode(string(rune('a' + rand.Intn(26)))) }`, "ok"},
	{"artifact time.Now still refused under test", `package artifact
import "time"
func Decode(s string) string { return s + time.Now().String() }`, testRandomDecode, "policy: time.Now is not available in the sandbox"},
	{"artifact calls the test's clock helper", `package artifact
func Decode(s string) string { return s + clock() }`, `package artifact
import ("testing"; "time")
func clock() string { return time.Now().String() }
func TestD(t *testing.T) { _ = Decode("x") }`, "policy: tests: the artifact uses clock, which only the test file declares or imports"},
	{"artifact calls the test's reference", `package artifact
func Decode(s string) string { return reference(s) }`, `package artifact
import "testing"
func reference(s string) string { return s }
func TestD(t *testing.T) { if Decode("x") != reference("x") { t.Fail() } }`, "policy: tests: the artifact uses reference, which only the test file declares or imports"},
	{"artifact reads the test's clock var", `package artifact
func Decode(s string) string { return s + started.String() }`, `package artifact
import ("testing"; "time")
var started = time.Now()
func TestD(t *testing.T) { _ = Decode("x") }`, "policy: tests: the artifact uses started, which only the test file declares or imports"},
	{"artifact leans on the test's math/rand import", `package artifact
func Decode(s string) string { return s[:rand.Intn(len(s))] }`, testRandomDecode, "policy: tests: the artifact uses rand, which only the test file declares or imports"},
	{"test declares main", artDecode, `package artifact
import "testing"
func main() {}
func TestD(t *testing.T) {}`, "policy: tests: func main is not allowed in acceptance tests"},
	{"test adds a method to an artifact type", `package artifact
type Clock struct{}
type nower interface{ Now() string }
func Decode(s string) string { var c any = Clock{}; if n, ok := c.(nower); ok { return n.Now() }; return s }`, `package artifact
import ("testing"; "time")
func (Clock) Now() string { return time.Now().String() }
func TestD(t *testing.T) { _ = Decode("x") }`, "policy: tests: method Clock.Now is declared in the test file on a type of the artifact"},
	{"artifact local of the same name is fine", `package artifact
func Decode(s string) string { reference := s; return reference }`, `package artifact
import "testing"
func reference(s string) string { return s }
func TestD(t *testing.T) { if Decode("x") != reference("x") { t.Fail() } }`, "ok"},
	{"test still refuses os", artDecode, `package artifact
import ("os"; "testing")
func TestD(t *testing.T) { _ = os.Getenv("HOME") }`, `policy: tests: import "os" is not allowed`},
	{"test still refuses go statements", artDecode, `package artifact
import "testing"
func TestD(t *testing.T) { go Decode("x") }`, "policy: tests: go statement is not allowed"},
	{"test still refuses time.Sleep", artDecode, `package artifact
import ("testing"; "time")
func TestD(t *testing.T) { time.Sleep(time.Millisecond) }`, "policy: tests: time.Sleep is not available in the sandbox"},
	{"test still refuses directives", artDecode, `package artifact
import "testing"
//go:noinline
func TestD(t *testing.T) {}`, `policy: tests: directive "//go:noinline" is not allowed`},
	{"test cannot reach the yaegi test hooks", artDecode, `package artifact
import "testing"
func TestD(t *testing.T) { _ = testing.Forge__Begin }`, "policy: tests: identifier Forge__Begin is reserved for the sandbox"},
	{"test cannot use testing.Benchmark", artDecode, `package artifact
import "testing"
func TestD(t *testing.T) { testing.Benchmark(nil) }`, "policy: tests: testing.Benchmark is not available in acceptance tests"},
	{"test cannot reach the environment through T", artDecode, `package artifact
import "testing"
func TestD(t *testing.T) { t.Setenv("A", "b") }`, "policy: tests: Setenv is not available in acceptance tests"},
	{"test may use the clock through the artifact's import", `package artifact
import "time"
func Decode(s string) string { return s + time.UTC.String() }`, `package artifact
import "testing"
func TestD(t *testing.T) { _ = time.Now() }`, "ok"},
}

const artDecode, testRandomDecode = sandboxtest.ShiftDecoder, sandboxtest.ShiftDecoderRandomTest

// TestBackendsGateTestFilesAlike: the boundary cases get the verdicts above from both backends'
// test gates.
func TestBackendsGateTestFilesAlike(t *testing.T) {
	for _, c := range testFileCases {
		src := sandbox.Source{Code: c.artifact}
		assert.Equal(t, c.want, verdict(yaegi.GateTests(src, c.tests)), "%s: yaegi", c.name)
		assert.Equal(t, c.want, verdict(wasm.GateTests(src, c.tests)), "%s: wasm", c.name)
	}
}

// TestNoBackendImportsAnother: the gate is shared, not borrowed: sandbox/wasm must not import
// sandbox/yaegi (nor the other way round), and sandbox/gate imports neither.
func TestNoBackendImportsAnother(t *testing.T) {
	const mod = "github.com/artifactforge/forge/sandbox/"
	forbidden := map[string][]string{
		mod + "wasm":  {mod + "yaegi"},
		mod + "yaegi": {mod + "wasm"},
		mod + "gate":  {mod + "yaegi", mod + "wasm"},
	}
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "go list -deps %s: %s", pkg, out)
		deps := strings.Fields(string(out))
		require.Contains(t, deps, pkg, "go list -deps lists the package itself")
		for _, b := range bad {
			for _, d := range deps {
				assert.False(t, d == b || strings.HasPrefix(d, b+"/"), "%s imports %s (through %s)", pkg, b, d)
			}
		}
	}
}

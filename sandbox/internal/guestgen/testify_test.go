package guestgen

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadTestifyHasNoNetHTTP: the test modules' testify keeps every assertion the gate allows
// and none of the HTTP ones, and nothing in it imports net/http.
func TestLoadTestifyHasNoNetHTTP(t *testing.T) {
	lite, _ := loadTestify(t)
	if !strings.Contains(lite.GoMod, "replace "+TestifyModule+" => ./testify") {
		t.Fatalf("go.mod does not replace testify with the copy:\n%s", lite.GoMod)
	}
	all := ""
	for p, src := range lite.Files {
		if strings.Contains(src, `"net/http`) {
			t.Errorf("%s still imports net/http", p)
		}
		all += src
	}
	for _, gone := range []string{"func HTTPSuccess(", "func (a *Assertions) HTTPBodyContainsf(", "func HTTPError("} {
		if strings.Contains(all, gone) {
			t.Errorf("%s is still there", gone)
		}
	}
	for _, kept := range []string{"func Equal(", "func (a *Assertions) Equalf(", "func Eventually(", "func NoError(", "func JSONEq(", "func YAMLEq("} {
		if !strings.Contains(all, kept) {
			t.Errorf("%s was cut", kept)
		}
	}
	for _, p := range []string{"testify/go.mod", "testify/assert/assertions.go", "testify/require/require.go", "testify/assert/yaml/yaml_default.go"} {
		if _, ok := lite.Files[p]; !ok {
			t.Errorf("%s missing", p)
		}
	}
	if _, ok := lite.Files["testify/assert/http_assertions.go"]; ok {
		t.Error("http_assertions.go kept")
	}
}

// TestLiteTestifyBuilds: a module that imports the copy's assert and require builds, vets clean
// (no unused import left by a cut) and does not link net/http.
func TestLiteTestifyBuilds(t *testing.T) {
	lite, tc := loadTestify(t)
	dir := t.TempDir()
	files := map[string]string{"go.mod": lite.GoMod, "x/x_test.go": "package x\n\nimport (\n\t\"testing\"\n\n\t\"github.com/stretchr/testify/assert\"\n\t\"github.com/stretchr/testify/require\"\n)\n\n" +
		"func TestX(t *testing.T) {\n\tassert.Equal(t, 1, 1)\n\trequire.True(t, true)\n\tassert.New(t).JSONEq(`{\"a\":1}`, `{\"a\": 1}`)\n\tassert.YAMLEq(t, \"a: 1\", \"a: 1\")\n}\n"}
	for p, src := range lite.Files {
		files[p] = src
	}
	for p, src := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		cmd := exec.Command(tc.Gobin, args...)
		cmd.Dir = dir
		cmd.Env = BuildEnv("GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local", "GOSUMDB=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("vet", "./...")
	run("test", "-count=1", "./x")
	if deps := run("list", "-deps", "-test", "./x"); strings.Contains(deps, "net/http\n") {
		t.Errorf("the test still depends on net/http:\n%s", deps)
	}
}

func loadTestify(t *testing.T) (Testify, Toolchain) {
	tc, err := FindToolchain("")
	if err != nil {
		t.Skip(err)
	}
	lite, err := LoadTestify(context.Background(), tc)
	if err != nil {
		t.Fatal(err)
	}
	return lite, tc
}

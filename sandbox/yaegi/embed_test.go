package yaegi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestEmbedderIsolation builds testdata/embedder, an agent in a module of its own that embeds
// forge as a library (replace directive to this repository; offline, from the module cache),
// then runs the agent's isolated programs with the worker found each way an
// embedder can provide one, and with none.
func TestEmbedderIsolation(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		//lint:ignore SA1019 the GOROOT the test binary was built with is the last resort
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goBin); err != nil {
			t.Skip("no Go toolchain to build the embedder with:", err)
		}
	}
	if runtime.GOOS == "windows" {
		t.Skip("process isolation needs rlimits, which windows lacks")
	}
	tmp := t.TempDir()
	build := func(dir, out, pkg string) {
		t.Helper()
		cmd := exec.Command(goBin, "build", "-o", out, pkg)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	embedder := filepath.Join(tmp, "embedder")
	build(filepath.Join("testdata", "embedder"), embedder, ".")
	// The worker binary an embedder finds is a forge CLI; this test binary stands in for it (its
	// TestMain serves workers as cmd/forge's main does, which cmd/forge's tests check), which
	// saves linking the CLI here.
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	binDir := filepath.Join(tmp, "bin")
	forgeBin := filepath.Join(binDir, "forge")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, forgeBin); err != nil {
		t.Fatal(err)
	}

	type result struct {
		Name  string          `json:"name"`
		Value json.RawMessage `json:"value"`
		Kind  string          `json:"kind"`
		Error string          `json:"error"`
	}
	run := func(t *testing.T, mode string, env ...string) map[string]result {
		t.Helper()
		cmd := exec.Command(embedder, mode)
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("embedder %s: %v\n%s", mode, err, stderr.String())
		}
		res := map[string]result{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var r result
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("embedder output %q: %v", sc.Text(), err)
			}
			res[r.Name] = r
		}
		return res
	}
	check := func(t *testing.T, res map[string]result) {
		t.Helper()
		want := map[string]string{"add": "5", "init_bomb": "memory", "native_recursion": "depth", "after": `"okok"`}
		for name, w := range want {
			r, ok := res[name]
			switch {
			case !ok:
				t.Errorf("%s: no result", name)
			case strings.HasPrefix(w, `"`) || w == "5":
				if string(r.Value) != w {
					t.Errorf("%s: value %s (%s), want %s", name, r.Value, r.Error, w)
				}
			case r.Kind != w:
				t.Errorf("%s: kind %q (%s), want %s", name, r.Kind, r.Error, w)
			}
		}
	}
	noForge := "PATH=" + t.TempDir() // a PATH with no forge on it (the go command is not needed)
	t.Run("MaybeServeWorker", func(t *testing.T) {
		check(t, run(t, "self", noForge, WorkerPathEnv+"="))
	})
	t.Run("FORGE_WORKER", func(t *testing.T) {
		check(t, run(t, "plain", noForge, WorkerPathEnv+"="+forgeBin))
	})
	t.Run("PATH", func(t *testing.T) {
		check(t, run(t, "plain", "PATH="+binDir, WorkerPathEnv+"="))
	})
	t.Run("none", func(t *testing.T) {
		res := run(t, "plain", noForge, WorkerPathEnv+"=")
		r := res["add"]
		if r.Kind != "internal" || !strings.Contains(r.Error, WorkerPathEnv) || !strings.Contains(r.Error, "MaybeServeWorker") || !strings.Contains(r.Error, "PATH") {
			t.Fatalf("with no worker: %+v; want an internal error that says how to provide one", r)
		}
	})
}

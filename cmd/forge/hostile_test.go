package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

// TestHostileCorpusThroughRun runs every hostile corpus case for yaegi through `forge run` in a
// process of its own, in-process and with --isolation process (as the corpus runner chooses the
// modes): the process must end with exit 0 or 1, never 2 (a crash) and never hang, and report a
// classified result. The run's own duration is logged against the case's deadline.
func TestHostileCorpusThroughRun(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join("..", "..", "sandbox", "testdata", "hostile")
	cases, err := sandboxtest.LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	modes := []string{sandboxtest.ModeInProcess, sandboxtest.ModeIsolated}
	for _, c := range cases {
		if len(c.Backends) > 0 && !strings.Contains(strings.Join(c.Backends, " "), "yaegi") {
			continue
		}
		for _, mode := range modes {
			if (c.Limits.Isolation == sandbox.IsolationProcess && mode != sandboxtest.ModeIsolated) ||
				(len(c.Modes) > 0 && !strings.Contains(strings.Join(c.Modes, " "), mode)) {
				continue
			}
			t.Run(c.Name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				file := filepath.Join(dir, c.Name+".go")
				if _, err := os.Stat(file); err != nil {
					file += ".txt"
				}
				lim := c.Limits.WithDefaults()
				args := []string{"run", file, "--json", "--store", store, "--timeout", lim.Timeout.String(),
					"--memory", sandboxtest.FormatBytes(lim.MemoryBytes)}
				if c.HasArgs {
					args = append(args, "--args", string(c.Args))
				}
				if c.Func != "" {
					args = append(args, "--func", c.Func)
				}
				if b, _ := json.Marshal(c.Caps); string(b) != "{}" {
					args = append(args, "--caps", string(b))
				}
				if mode == sandboxtest.ModeIsolated {
					args = append(args, "--isolation", "process")
				}
				cmd := exec.Command(self, args...)
				cmd.Env = append(os.Environ(), cliEnv+"=1")
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				// A hang bound, not a speed assertion: the deadline, the compile bound and slack.
				bound := lim.Timeout + yaegi.DefaultCompileTimeout + 20*time.Second
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				var werr error
				select {
				case werr = <-done:
				case <-time.After(bound):
					_ = cmd.Process.Kill()
					<-done
					t.Fatalf("forge run hung past %v; stderr:\n%s", bound, stderr.String())
				}
				code := 0
				var ee *exec.ExitError
				if errors.As(werr, &ee) {
					code = ee.ExitCode()
				} else if werr != nil {
					t.Fatal(werr)
				}
				if code != exitOK && code != exitFailed {
					t.Fatalf("forge run exit %d (want 0 or 1); stderr:\n%s", code, tail(stderr.String()))
				}
				var res runResult
				if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
					t.Fatalf("forge run --json printed %q: %v; stderr:\n%s", stdout.String(), err, tail(stderr.String()))
				}
				// forge run has no flag for the output cap: those cases only have to end cleanly.
				if len(c.Kinds) > 0 && c.Limits.OutputBytes == 0 && (res.Error == nil || !kindIn(res.Error.Kind, c.Kinds)) {
					if res.Error == nil {
						t.Fatalf("forge run succeeded (%d-byte value), want kind %v", len(res.Value), c.Kinds)
					}
					t.Fatalf("error %v, want kind %v", res.Error, c.Kinds)
				}
				if d, err := time.ParseDuration(res.Duration); err == nil && d > lim.Timeout {
					t.Logf("run took %v, %v past its deadline", d, d-lim.Timeout)
				}
			})
		}
	}
}

func kindIn(k sandbox.Kind, ks []sandbox.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

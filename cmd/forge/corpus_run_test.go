package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// forgeBinary builds cmd/forge once per test run: the hostile corpus goes through the real
// `forge run` process, whose exit status is what an agent that shells out sees.
var forgeBinary = sync.OnceValues(func() (string, error) { return buildForgeBinary() })

// buildForgeBinary builds cmd/forge with the go build flags given (e.g. -tags natsembedded).
func buildForgeBinary(flags ...string) (string, error) {
	dir, err := os.MkdirTemp("", "forge-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "forge")
	out, err := exec.Command("go", append(append([]string{"build", "-o", bin}, flags...), ".")...).CombinedOutput()
	if err != nil {
		return "", errors.New("go build: " + err.Error() + "\n" + string(out))
	}
	return bin, nil
}

// compileBound is the stated bound on everything before a call starts (parse, policy, type check,
// build, compile, initializers), generous for a loaded 2-core machine.
const compileBound = 3 * time.Minute

// TestForgeRunHostileCorpus runs every hostile corpus program through `forge run` as a separate
// process, on the safe default backend and on yaegi in worker processes: each ends with exit 0
// or 1 (never a Go panic's 2, a fatal error or a hang), within its deadline plus the compile bound,
// and prints no Go crash.
func TestForgeRunHostileCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forge and runs the whole hostile corpus")
	}
	bin, err := forgeBinary()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := sandboxtest.LoadCorpus("../../sandbox/testdata/hostile")
	if err != nil {
		t.Fatal(err)
	}
	// The store's cache/ is the wasm package's test cache, so modules its tests built are not
	// built again (the cache is content-addressed and safe to share).
	store := t.TempDir()
	if cache := wasmTestCache(); cache != "" {
		if err := os.MkdirAll(cache, 0o755); err == nil {
			_ = os.Symlink(cache, filepath.Join(store, "cache"))
		}
	}
	placements := []struct{ name, sandbox, isolation string }{
		{"default", "", ""},
		{"yaegi-process", "yaegi", sandbox.IsolationProcess},
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) {
					t.Parallel()
					sem <- struct{}{}
					defer func() { <-sem }()
					runHostile(t, bin, store, c, pl.sandbox, pl.isolation)
				})
			}
		})
	}
}

func runHostile(t *testing.T, bin, store string, c sandboxtest.Case, backend, isolation string) {
	timeout := c.Limits.Timeout
	if timeout <= 0 {
		timeout = time.Second
	}
	args := []string{"run", "--store", store, "--json", "--timeout", timeout.String()}
	if backend != "" {
		args = append(args, "--sandbox", backend)
	}
	if isolation != "" {
		args = append(args, "--isolation", isolation)
	}
	if c.Limits.MemoryBytes > 0 {
		args = append(args, "--memory", fmtBytes(c.Limits.MemoryBytes))
	}
	if c.Func != "" {
		args = append(args, "--func", c.Func)
	}
	if len(c.Args) > 0 {
		args = append(args, "--args", string(c.Args))
	}
	if caps, err := json.Marshal(c.Caps); err == nil && string(caps) != "{}" {
		args = append(args, "--caps", string(caps))
	}
	args = append(args, "-")
	ctx, cancel := context.WithTimeout(context.Background(), compileBound+timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(c.Code)
	cmd.Env = append(os.Environ(), "FORGE_SANDBOX=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("forge run did not end within the compile bound %v plus the deadline %v", compileBound, timeout)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 && code != 1 {
		t.Fatalf("forge run exited %d, want 0 or 1:\nstdout: %s\nstderr: %s", code, tail(stdout.String()), tail(stderr.String()))
	}
}

// wasmTestCache is the wasm package's shared test cache ($FORGE_WASM_TEST_CACHE, else
// os.UserCacheDir()/forge-test).
func wasmTestCache() string {
	if d := os.Getenv("FORGE_WASM_TEST_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "forge-test")
}

func fmtBytes(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + "MB"
	}
	return strconv.FormatInt(n, 10)
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

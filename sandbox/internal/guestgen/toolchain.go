package guestgen

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/artifactforge/forge/sandbox"
)

// ErrNoToolchain is returned (wrapped in a *sandbox.Error of KindInternal) when no Go toolchain that
// builds the guests (Go 1.24 or later: wasip1 reactors need //go:wasmexport) is on the machine.
var ErrNoToolchain = errors.New("no Go toolchain")

// Toolchain is the Go command the build step runs.
type Toolchain struct {
	Gobin   string
	Version string // "go1.26.8"
}

var goVersionRE = regexp.MustCompile(`^go1\.(\d+)`)

// FindToolchain looks for the go command: explicit, $FORGE_GO, PATH, then the GOROOT this binary
// was built with. It checks that the version supports //go:wasmexport (Go 1.24).
func FindToolchain(explicit string) (Toolchain, error) {
	var candidates []string
	if explicit != "" {
		candidates = append(candidates, explicit)
	}
	if env := os.Getenv("FORGE_GO"); env != "" {
		candidates = append(candidates, env)
	}
	if p, err := exec.LookPath("go"); err == nil {
		candidates = append(candidates, p)
	}
	if gr := os.Getenv("GOROOT"); gr != "" {
		candidates = append(candidates, filepath.Join(gr, "bin", "go"))
	}
	//lint:ignore SA1019 the GOROOT the binary was built with is a useful last resort
	if gr := runtime.GOROOT(); gr != "" {
		candidates = append(candidates, filepath.Join(gr, "bin", "go"))
	}
	return FirstToolchain(candidates)
}

// FirstToolchain returns the first candidate go command that runs and is Go 1.24 or later.
func FirstToolchain(candidates []string) (Toolchain, error) {
	var tried []string
	for _, c := range candidates {
		v, ok := rootVersion(c)
		if !ok {
			cmd := exec.Command(c, "env", "GOVERSION")
			cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local") // what builds will use
			out, err := cmd.Output()
			if err != nil {
				tried = append(tried, fmt.Sprintf("%s (%v)", c, err))
				continue
			}
			v = strings.TrimSpace(string(out))
		}
		m := goVersionRE.FindStringSubmatch(v)
		if m == nil || atoi(m[1]) < 24 {
			tried = append(tried, fmt.Sprintf("%s (%s: need go1.24 or later)", c, v))
			continue
		}
		return Toolchain{Gobin: c, Version: v}, nil
	}
	msg := "no Go toolchain (go1.24+) found to build sandboxed code; install Go or set FORGE_GO to the go command"
	if len(tried) > 0 {
		msg += "; tried " + strings.Join(tried, ", ")
	}
	return Toolchain{}, &sandbox.Error{Kind: sandbox.KindInternal, Message: msg, Hint: "or use the yaegi sandbox", Err: ErrNoToolchain}
}

// rootVersion reads the version of the go command at gobin from its GOROOT's VERSION file
// (GOROOT/bin/go), which is what `go env GOVERSION` prints with GOTOOLCHAIN=local. It saves a
// process start (7–11 ms of a cold load); a go command outside a GOROOT (a wrapper, a shim) is
// asked instead.
func rootVersion(gobin string) (string, bool) {
	real, err := filepath.EvalSymlinks(gobin)
	if err != nil {
		return "", false
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", false
	}
	if filepath.Base(filepath.Dir(real)) != "bin" {
		return "", false
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(real)), "VERSION"))
	if err != nil {
		return "", false
	}
	v, _, _ := strings.Cut(string(b), "\n")
	v = strings.TrimSpace(v)
	if !goVersionRE.MatchString(v) {
		return "", false
	}
	return v, true
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// buildLineRE matches a go build diagnostic in one of the guest's files.
var buildLineRE = regexp.MustCompile(`(?m)^\.?/?(artifact/[a-z_]+\.go|[a-z_/]+\.go):(\d+):(\d+): (.*)$`)

// BuildError turns go build output into a KindCompile error pointing at the artifact's line.
func BuildError(out string, err error) *sandbox.Error {
	out = strings.TrimSpace(out)
	var msgs []string
	line, test := 0, false
	for _, m := range buildLineRE.FindAllStringSubmatch(out, -1) {
		file := m[1]
		if file != "artifact/artifact.go" && file != "artifact/acceptance.go" {
			continue
		}
		if line == 0 {
			fmt.Sscan(m[2], &line)
			test = file == "artifact/acceptance.go"
		}
		msgs = append(msgs, m[2]+":"+m[3]+": "+m[4])
	}
	if len(msgs) == 0 {
		if wrapperBuildFailure(out) {
			// The compiler rejected the package outside the artifact's lines: the wrapper is
			// generated from a fixed template that builds around any well-behaved file, so it
			// is the code that broke it (a name colliding with the wrapper's, a build constraint
			// that excludes the file, a redeclared predeclared name such as any).
			return &sandbox.Error{Kind: sandbox.KindCompile, Message: "the code does not build inside the forge's generated wrapper: " + firstLines(out, 5), Err: err,
				Hint: "one plain file in package artifact: no build constraints (//go:build, // +build), no top-level names starting with forge, " +
					"and no top-level declaration that redeclares a predeclared name (any, error, string, len, ...)"}
		}
		return &sandbox.Error{Kind: sandbox.KindInternal, Message: "go build failed: " + out, Err: err}
	}
	msg := strings.Join(msgs, "; ")
	if test {
		msg = "tests: " + msg
	}
	return &sandbox.Error{Kind: sandbox.KindCompile, Line: line, Message: msg, Err: err}
}

// wrapperBuildFailure reports whether go build's output is the compiler's verdict on the guest
// package (diagnostics in one of its files, or no file left to build), not a failure of the
// toolchain or the machine.
func wrapperBuildFailure(out string) bool {
	return buildLineRE.MatchString(out) || strings.Contains(out, "build constraints exclude all Go files") ||
		strings.Contains(out, "no Go files in")
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

// BuildEnv is the environment of a guest's go build: this process's without what would change
// the build (target, flags, workspace, toolchain switch, cgo, experiments), the user's module and
// build caches kept (repeated builds take a fraction of a second), plus set.
func BuildEnv(set ...string) []string {
	env := make([]string, 0, len(os.Environ())+len(set))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOOS", "GOARCH", "GOFLAGS", "GOWORK", "GOTOOLCHAIN", "CGO_ENABLED", "GOSUMDB", "GOWASM", "GOEXPERIMENT":
			continue
		}
		env = append(env, kv)
	}
	return append(env, set...)
}

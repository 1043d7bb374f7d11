package wasm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/artifactforge/forge/internal/storepath"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// builder turns generated guest modules into instrumented wasm binaries, cached on disk by content
// key; concurrent builds of one key share a single go build.
type builder struct {
	dir    string // <cache>/wasm/modules: <key>.wasm.gz files
	root   string // below it no link is followed (the store, for the forge's cache/)
	rec    records
	once   sync.Once
	tc     toolchain
	tcErr  error
	opt    string
	group  singleflight.Group
	builds atomic.Int64 // go builds run (tests check that concurrent requests share one)
	// rejected counts cached files (modules, compiled code) not used because they did not match
	// their record.
	rejected atomic.Int64
	// warm records the warm-up build of each kind of module (call, test): once it passed, the
	// toolchain's cache holds the standard library for wasip1 and an artifact's own build is
	// held to buildTimeout.
	warmCall, warmTest atomic.Bool
	// trustCall and trustTest say that the warm-up of a kind was the machine marker's word, not
	// a build of this process, and that no build of the kind has passed since (see build).
	trustCall, trustTest atomic.Bool
	// lockCall and lockTest are the machine's warm-up lock of each kind while this process waits
	// for another to release it (nil otherwise): a call that runs out of time meanwhile says so.
	lockCall, lockTest atomic.Pointer[string]
}

func newBuilder(cacheDir, root string, rec records, gobin string) *builder {
	return &builder{dir: filepath.Join(cacheDir, "modules"), root: root, rec: rec, opt: gobin}
}

func (b *builder) toolchain() (toolchain, error) {
	b.once.Do(func() { b.tc, b.tcErr = findToolchain(b.opt) })
	return b.tc, b.tcErr
}

// build returns the instrumented module for g, from the cache or by running go build. persist
// says whether the module is worth keeping on disk (call modules are; test modules, 4.5 MB each and
// used once per generation, are not).
func (b *builder) build(ctx context.Context, g guestModule, persist bool) ([]byte, error) {
	tc, err := b.toolchain()
	if err != nil {
		return nil, err
	}
	key := g.key(tc.Version)
	path := b.modulePath(key)
	if bin, ok := b.cached(path, key); ok {
		return bin, nil
	}
	if err := b.warmUp(ctx, tc, g.isTest()); err != nil {
		return nil, err
	}
	// The build is shared by every caller of this key and outlives any one of them: it runs under
	// its own timeout, and a caller whose deadline passes stops waiting (the module still lands in
	// the cache for the next call).
	ch := b.group.DoChan(key, func() (any, error) {
		if bin, ok := b.cached(path, key); ok {
			return bin, nil
		}
		bin, err := b.boundedBuild(ctx, tc, g)
		if err != nil && b.unproven(g.isTest()) && sandbox.AsError(err).Kind == sandbox.KindDeadline {
			// The machine's marker spared this process its warm-up build, and this build ran out
			// of time: the build cache may have been emptied since the marker was written (go
			// clean -cache), which is no artifact's doing. Warm for real, then build again. (Not
			// for memory: the standard library's compile needs a third of the bound.)
			if err := b.rewarm(ctx, tc, g.isTest()); err != nil {
				return nil, err
			}
			bin, err = b.boundedBuild(ctx, tc, g)
		}
		if err == nil {
			b.trust(g.isTest()).Store(false) // the cache is proven warm for this kind
		}
		if err != nil || !persist {
			return bin, err
		}
		if err := writeModule(b.root, path, bin); err != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "cache module: " + err.Error(), Err: err}
		}
		// The record goes last: a crash between leaves a module without one, which is rebuilt.
		if err := b.rec.Write(moduleRecord(key), sha256Hex(bin)); err != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "record cached module: " + err.Error(), Err: err}
		}
		return bin, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.([]byte), nil
	case <-ctx.Done():
		return nil, &sandbox.Error{Kind: sandbox.KindDeadline, Message: "deadline exceeded waiting for the module build", Err: ctx.Err()}
	}
}

// boundedBuild is goBuild under buildTimeout, whatever ctx's deadline (the build is shared).
func (b *builder) boundedBuild(ctx context.Context, tc toolchain, g guestModule) ([]byte, error) {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), buildTimeout)
	defer cancel()
	return b.goBuild(bctx, tc, g)
}

// trust is the flag that says this kind's warm-up was taken on the machine marker's word
// (warmUp) and no build of that kind has passed since in this process.
func (b *builder) trust(test bool) *atomic.Bool {
	if test {
		return &b.trustTest
	}
	return &b.trustCall
}

func (b *builder) unproven(test bool) bool { return b.trust(test).Load() }

// rewarm runs the warm-up build of this kind whatever the markers say (once for concurrent
// callers), under warmTimeout.
func (b *builder) rewarm(ctx context.Context, tc toolchain, test bool) error {
	_, err, _ := b.group.Do(fmt.Sprintf("rewarm:%v", test), func() (any, error) {
		if !b.trust(test).Load() {
			return nil, nil
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), warmTimeout)
		defer cancel()
		if err := b.warmBuild(wctx, tc, test); err != nil {
			return nil, err
		}
		b.trust(test).Store(false)
		return nil, nil
	})
	return err
}

// warmFailed is the error of a failed warm-up build: the toolchain's (KindInternal).
func warmFailed(err error) error {
	return &sandbox.Error{Kind: sandbox.KindInternal, Err: err,
		Message: "the warm-up build of a trivial wasm module failed, so the toolchain cannot build modules: " + err.Error(),
		Hint:    "check that `GOOS=wasip1 GOARCH=wasm go build` works with this Go, or use the yaegi sandbox"}
}

// Build bounds. An artifact's go build (the go command and the compiler and linker it starts)
// runs with buildTimeout and buildDataBytes; what it exceeds is the code's doing, since the
// warm-up build of a trivial module of the same kind has already compiled everything else (the
// standard library for wasip1, testify) under the looser warmTimeout. Measured on a 2-core
// machine (see RATIONALE.md): a warm build takes 0.2-0.5 s and under 200 MB of data; a cold one
// (the runtime and standard library) about 30 s and 200-300 MB.
const (
	warmTimeout    = 5 * time.Minute
	buildDataBytes = 1 << 30
)

// buildTimeout bounds an artifact's build (a variable: tests shorten it).
var buildTimeout = 60 * time.Second

// isTest says whether g is a test module (testGuest) rather than a call module.
func (g guestModule) isTest() bool {
	_, ok := g.files["artifact/acceptance.go"]
	return ok
}

// warmGuest is the trivial module of each kind that the warm-up builds.
func warmGuest(ctx context.Context, tc toolchain, test bool) (guestModule, error) {
	code := "package artifact\n\nfunc Warm(n int) int { return n }\n"
	if test {
		tests := "package artifact\n\nimport (\n\t\"testing\"\n\n\t\"github.com/stretchr/testify/assert\"\n\t\"github.com/stretchr/testify/require\"\n)\n\n" +
			"func TestWarm(t *testing.T) {\n\trequire.Equal(t, 1, Warm(1))\n\tassert.Equal(t, 2, Warm(2))\n}\n"
		lite, err := guestgen.LoadTestify(ctx, tc)
		if err != nil {
			return guestModule{}, err
		}
		return testGuest(code, tests, []string{"TestWarm"}, lite), nil
	}
	sig, _ := sandbox.ParseSignature(sandbox.Source{Code: code})
	return callGuest(code, sig), nil
}

// warmBuild runs the warm-up build of a kind under warmTimeout (the deadline in ctx).
func (b *builder) warmBuild(ctx context.Context, tc toolchain, test bool) error {
	g, err := warmGuest(ctx, tc, test)
	if err == nil {
		_, err = b.runGoBuild(ctx, tc, g, warmTimeout, true)
	}
	if err != nil {
		return warmFailed(err)
	}
	return nil
}

// warmUp builds the trivial module of g's kind once per builder, under warmTimeout: on a cold
// cache that compiles the standard library, which is no artifact's doing. Its failure is the
// toolchain's (KindInternal).
func (b *builder) warmUp(ctx context.Context, tc toolchain, test bool) error {
	flag, key, waiting := &b.warmCall, "warm:call", &b.lockCall
	if test {
		flag, key, waiting = &b.warmTest, "warm:test", &b.lockTest
	}
	if flag.Load() {
		return nil
	}
	ch := b.group.DoChan(key, func() (any, error) {
		if flag.Load() {
			return nil, nil
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), warmTimeout)
		defer cancel()
		// Another process warming this kind (a detached warm-up an earlier command started) is
		// waited for, not repeated. Once the machine's marker is there, this process's own
		// trivial build (a go command and a link: 0.2-0.4 s quiet, seconds under load) is
		// skipped on its word; a build cache emptied since then is found by the first build
		// that runs out of its bounds, which warms for real and builds again (build).
		if p := machineWarmPath(tc, test); p != "" {
			p += ".lock"
			waiting.Store(&p)
		}
		release, _ := lockMachineWarm(wctx, tc, test)
		waiting.Store(nil)
		defer release()
		if machineWarm(tc, test) {
			b.trust(test).Store(true)
			flag.Store(true)
			_ = writeFileAtomic(b.root, b.warmMarker(tc, test), []byte(tc.Version+"\n"))
			return nil, nil
		}
		if err := b.warmBuild(wctx, tc, test); err != nil {
			return nil, err
		}
		flag.Store(true)
		// The store's marker spares later processes an early warm-up (NeedsWarm); the machine's
		// also their trivial build (above), every store of this user and build cache included.
		_ = writeFileAtomic(b.root, b.warmMarker(tc, test), []byte(tc.Version+"\n"))
		markMachineWarm(tc, test)
		return nil, nil
	})
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		msg := "deadline exceeded waiting for the warm-up build of the wasm toolchain"
		if p := waiting.Load(); p != nil && lockHeld(*p) {
			msg = fmt.Sprintf("deadline exceeded waiting for another process's warm-up of the wasm toolchain: it holds the lock %s (a detached warm-up an earlier forge command started takes ~6 s of CPU; a stuck one: end it, and the next call warms here; this process goes on without the lock after %s)", *p, warmTimeout)
		}
		return &sandbox.Error{Kind: sandbox.KindDeadline, Message: msg, Err: ctx.Err()}
	}
}

// warmMarker is the file that says the warm-up build of a kind of module passed with this
// toolchain on this machine (the cache directory is per user, like the toolchain's build cache).
func (b *builder) warmMarker(tc toolchain, test bool) string {
	kind := "call"
	if test {
		kind = "test"
	}
	return filepath.Join(filepath.Dir(b.dir), "warm", tc.Version+"-"+kind)
}

// needsWarm reports whether a warm-up build of either kind has not yet passed with this toolchain
// (in this process, or in an earlier one as its marker or the machine's says). No toolchain:
// nothing to warm.
func (b *builder) needsWarm() bool {
	tc, err := b.toolchain()
	if err != nil {
		return false
	}
	for _, test := range []bool{true, false} {
		flag := &b.warmCall
		if test {
			flag = &b.warmTest
		}
		if flag.Load() || machineWarm(tc, test) {
			continue
		}
		if _, err := os.Lstat(b.warmMarker(tc, test)); err != nil {
			return true
		}
	}
	return false
}

// NeedsWarm reports whether the Go toolchain has not yet built a module of each kind for wasip1
// on this machine (sandbox.Warmer): the first build then compiles the standard library.
func (s *Sandbox) NeedsWarm() bool { return s.builder.needsWarm() }

// Warm builds the trivial call module and test module once (sandbox.Warmer), which compiles the
// standard library and testify for wasip1 into the toolchain's build cache; a Compile or Test
// meanwhile waits for the warm-up of its own kind rather than repeat it. The call module comes
// first: it needs a small part of the standard library (about 8 s on a cold build cache, against
// about 8 s more for the test module's testing and testify; 20 s before testify's HTTP
// assertions, and net/http with them, were cut: guestgen.Testify), so a first call of a method
// without acceptance tests is not kept waiting for the test module. Its failure is the
// toolchain's (KindInternal).
func (s *Sandbox) Warm(ctx context.Context) error {
	tc, err := s.builder.toolchain()
	if err != nil {
		return err
	}
	if err := s.builder.warmUp(ctx, tc, false); err != nil {
		return err
	}
	return s.builder.warmUp(ctx, tc, true)
}

// goBuildRaw writes g to a temporary directory and builds it as a wasip1 reactor, under the
// build bounds.
func (b *builder) goBuildRaw(ctx context.Context, tc toolchain, g guestModule) ([]byte, error) {
	bin, err := b.runGoBuild(ctx, tc, g, buildTimeout, false)
	if err == nil {
		b.builds.Add(1)
	}
	return bin, err
}

// warmGOGC is the compiler's GOGC in a warm-up build. The standard library's compile (the runtime
// package alone is most of a call module's) spends a quarter of its CPU collecting garbage at
// GOGC=100: 400 cut the cold build of a call module from 7.0 to 5.3 s of CPU for 223 → 294-350 MB
// of peak RSS (RATIONALE, "The first method on a fresh machine"). GOGC is not part of the build
// cache's keys. An artifact's own build keeps the default: its memory is bounded (buildDataBytes)
// and its compile takes a few hundredths of a second.
const warmGOGC = "GOGC=400"

// warmBuilds counts the warm-up builds started (tests check which were skipped).
var warmBuilds atomic.Int64

// runGoBuild runs go build for g with the data limit and the deadline in ctx (limit is what the
// deadline was, for the error); warm says it is a warm-up build (warmGOGC).
func (b *builder) runGoBuild(ctx context.Context, tc toolchain, g guestModule, limit time.Duration, warm bool) ([]byte, error) {
	dir, err := os.MkdirTemp("", "forge-wasm-*")
	if err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "build dir: " + err.Error(), Err: err}
	}
	defer os.RemoveAll(dir)
	for p, content := range g.files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "build dir: " + err.Error(), Err: err}
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "build dir: " + err.Error(), Err: err}
		}
	}
	out := filepath.Join(dir, "module.wasm")
	cmd := exec.CommandContext(ctx, tc.Gobin, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", guestGcflags, "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = buildEnv()
	if warm {
		cmd.Env = append(cmd.Env, warmGOGC)
		warmBuilds.Add(1)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	boundBuild(cmd) // a process group, so that the deadline stops the compiler and linker too
	err = cmd.Start()
	if err == nil {
		if lerr := limitBuildData(cmd.Process.Pid, buildDataBytes); lerr != nil {
			_ = cmd.Cancel()
			_ = cmd.Wait()
			return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "bound go build: " + lerr.Error(), Err: lerr}
		}
		err = cmd.Wait()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindDeadline, Err: ctx.Err(),
				Message: fmt.Sprintf("the build of this code exceeded %v (go build stopped)", limit),
				Hint:    "the Go compiler needs far less for ordinary code: avoid huge literals, generated tables and deep generic instantiation"}
		}
		if outOfMemory(stderr.String()) {
			return nil, &sandbox.Error{Kind: sandbox.KindMemory, Err: err,
				Message: fmt.Sprintf("the build of this code exceeded %d MB (go build ran out of memory: %s)", buildDataBytes>>20, oomLine(stderr.String())),
				Hint:    "the Go compiler needs far less for ordinary code: avoid huge array literals and static data"}
		}
		return nil, buildError(stderr.String(), err)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "read module: " + err.Error(), Err: err}
	}
	return bin, nil
}

// outOfMemory says whether go build output reports a process of the build out of memory (the
// data limit, or the machine). A Go process whose mmap fails under RLIMIT_DATA sometimes dies of
// SIGSEGV in the runtime instead of "out of memory" (seen in about one build in four of a 1 GiB
// static array); a compiler that segfaults with memory to spare would be a toolchain bug.
func outOfMemory(out string) bool {
	return strings.Contains(out, "out of memory") || strings.Contains(out, "cannot allocate memory") ||
		strings.Contains(out, "SIGSEGV")
}

// oomLine is the first "fatal error"/"out of memory" line of go build output, or its first line.
func oomLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "out of memory") || strings.Contains(l, "cannot allocate memory") || strings.Contains(l, "SIGSEGV") {
			return strings.TrimSpace(l)
		}
	}
	l, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return l
}

// goBuild builds g and instruments it (see instrumentFuel).
func (b *builder) goBuild(ctx context.Context, tc toolchain, g guestModule) ([]byte, error) {
	bin, err := b.goBuildRaw(ctx, tc, g)
	if err != nil {
		return nil, err
	}
	inst, err := instrumentFuel(bin)
	if err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: err.Error(), Err: err}
	}
	return inst, nil
}

// buildEnv is the go build environment: wasip1 reactor, no cgo, no workspace, no toolchain switch,
// module cache and build cache of the user (so repeated builds take a fraction of a second).
func buildEnv() []string {
	return guestgen.BuildEnv("GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOWORK=off", "GOTOOLCHAIN=local",
		"GOFLAGS=-mod=mod", "GOSUMDB=off")
}

// writeFileAtomic writes a cache file below root (never through a symbolic link).
func writeFileAtomic(root, path string, data []byte) error {
	if err := storepath.MkdirAll(root, filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return storepath.Replace(root, path, data) // a cache: a lost or damaged file is rebuilt
}

// ErrNoToolchain is returned (wrapped in a *sandbox.Error of KindInternal) when no Go toolchain that
// can build wasip1 reactors (Go 1.24 or later) is on the machine.
var ErrNoToolchain = guestgen.ErrNoToolchain

type toolchain = guestgen.Toolchain

func findToolchain(explicit string) (toolchain, error) { return guestgen.FindToolchain(explicit) }

func buildError(out string, err error) *sandbox.Error { return guestgen.BuildError(out, err) }

package wasm

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// helloCode is the hello-world-sized artifact of the size measurements.
const helloCode = "package artifact\n\nfunc Hello(name string) string { return \"hello \" + name }\n"

// diskSize is what one artifact's wasm costs on disk in the cache under dir: the built module
// (modules/) and wazero's compiled code (compiled/).
type diskSize struct{ module, compiled int64 }

func (d diskSize) total() int64 { return d.module + d.compiled }

func cacheBytes(t testing.TB, dir string) diskSize {
	t.Helper()
	var d diskSize
	for sub, n := range map[string]*int64{"modules": &d.module, "compiled": &d.compiled} {
		err := filepath.WalkDir(filepath.Join(dir, "wasm", sub), func(_ string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.Type().IsRegular() {
				fi, err := e.Info()
				if err != nil {
					return err
				}
				*n += fi.Size()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// measureArtifact compiles code in a fresh cache (module built, compiled, cached) and loads it
// again in a second sandbox on that cache, as a restarted process does. The code gets a comment
// unique to this call, so the go build cache does not hold its package and the build is cold.
func measureArtifact(t testing.TB, code, fn string) (size diskSize, compile, load time.Duration) {
	t.Helper()
	code += "\n// measured " + strconv.FormatInt(time.Now().UnixNano(), 36) + "\n"
	dir := t.TempDir()
	ctx := context.Background()
	sb, err := New(Options{CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := sb.Compile(ctx, sandbox.Source{Code: code, Func: fn}); err != nil {
		t.Fatal(err)
	}
	compile = time.Since(start)
	sb.Close()
	sb, err = New(Options{CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := sb.Compile(ctx, sandbox.Source{Code: code, Func: fn}); err != nil {
		t.Fatal(err)
	}
	load = time.Since(start)
	sb.Close()
	return cacheBytes(t, filepath.Join(dir, "cache")), compile, load
}

// maxSmallArtifactBytes bounds what a hello-world-sized artifact costs on disk (module +
// compiled code). Measured: 0.63 MB + 7.30 MB = 7.92 MB (16.77 MB before the lean guest and the
// compressed module); the bound is a regression guard, with room for toolchain growth.
const maxSmallArtifactBytes = 10 << 20

// TestSmallArtifactDiskSize: a hello-world artifact's module and compiled code stay small on disk
// (the lean dispatcher links neither encoding/json nor fmt, and the module is stored compressed).
func TestSmallArtifactDiskSize(t *testing.T) {
	size, _, _ := measureArtifact(t, helloCode, "")
	t.Logf("hello-world artifact on disk: module %d B + compiled %d B = %d B", size.module, size.compiled, size.total())
	if size.total() > maxSmallArtifactBytes {
		t.Errorf("a hello-world artifact takes %d bytes on disk (module %d, compiled %d), over the %d-byte bound: did the guest start linking encoding/json, fmt or os again?",
			size.total(), size.module, size.compiled, maxSmallArtifactBytes)
	}
	if size.module > size.compiled/4 {
		t.Errorf("the cached module is %d bytes for %d bytes of compiled code: is it still stored compressed?", size.module, size.compiled)
	}
}

// TestArtifactDiskSizes prints the table of RATIONALE.md "Smaller wasm artifacts": disk per
// artifact (module + compiled code), cold compile (go build + instrument + wazero compile) and
// cold load (a new process's first Compile from the caches), for the hello-world artifact and
// every 8th HumanEval-X canonical solution (21). FORGE_WASM_SIZES=1 runs it (about a minute);
// it reads only the public API, so the same file measures an older tree.
func TestArtifactDiskSizes(t *testing.T) {
	if os.Getenv("FORGE_WASM_SIZES") != "1" {
		t.Skip("FORGE_WASM_SIZES=1 runs the size table")
	}
	type row struct {
		name          string
		size          diskSize
		compile, load time.Duration
	}
	var rows []row
	s, c, l := measureArtifact(t, helloCode, "")
	rows = append(rows, row{"hello", s, c, l})
	problems := sandboxtest.LoadHumanEval(t)
	for i := 0; i < len(problems); i += 8 {
		p := problems[i]
		m := regexp.MustCompile(`func (\w+)\(`).FindStringSubmatch(p.Declaration)
		if m == nil {
			t.Fatalf("%s: no function in %q", p.TaskID, p.Declaration)
		}
		s, c, l := measureArtifact(t, p.Prompt+p.CanonicalSolution, m[1])
		rows = append(rows, row{p.TaskID, s, c, l})
	}
	mb := func(n int64) string { return fmt.Sprintf("%.2f", float64(n)/1e6) }
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-14s %8s %9s %7s %9s %8s\n", "artifact", "module", "compiled", "total", "compile", "load")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-14s %8s %9s %7s %9v %8v\n", r.name, mb(r.size.module), mb(r.size.compiled), mb(r.size.total()),
			r.compile.Round(time.Millisecond), r.load.Round(time.Millisecond))
	}
	he := rows[1:]
	med := func(f func(row) int64) (int64, int64) {
		v := make([]int64, len(he))
		for i, r := range he {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2], v[len(v)-1]
	}
	for _, m := range []struct {
		name string
		f    func(row) int64
		ms   bool
	}{
		{"module MB", func(r row) int64 { return r.size.module }, false},
		{"compiled MB", func(r row) int64 { return r.size.compiled }, false},
		{"total MB", func(r row) int64 { return r.size.total() }, false},
		{"compile", func(r row) int64 { return int64(r.compile) }, true},
		{"load", func(r row) int64 { return int64(r.load) }, true},
	} {
		md, mx := med(m.f)
		if m.ms {
			fmt.Fprintf(&b, "HumanEval (%d) %-12s median %v max %v\n", len(he), m.name, time.Duration(md).Round(time.Millisecond), time.Duration(mx).Round(time.Millisecond))
		} else {
			fmt.Fprintf(&b, "HumanEval (%d) %-12s median %s max %s\n", len(he), m.name, mb(md), mb(mx))
		}
	}
	t.Log(b.String())
}

// TestColdCompileLeanVsJSON alternates cold compiles of the same artifacts with the lean and the
// encoding/json dispatcher in one process, so that both see the same machine load, and prints the
// medians; it also times the gzip of each built module (the part of a compile the compressed
// cache adds). FORGE_WASM_SIZES=1 runs it.
func TestColdCompileLeanVsJSON(t *testing.T) {
	if os.Getenv("FORGE_WASM_SIZES") != "1" {
		t.Skip("FORGE_WASM_SIZES=1 runs the cold compile comparison")
	}
	problems := sandboxtest.LoadHumanEval(t)
	var lean, legacy, gz []time.Duration
	for i := 0; i < len(problems); i += 16 {
		p := problems[i]
		m := regexp.MustCompile(`func (\w+)\(`).FindStringSubmatch(p.Declaration)
		code := p.Prompt + p.CanonicalSolution
		for _, legacyRun := range []bool{i%32 == 0, i%32 != 0} { // alternate which goes first
			noLean = legacyRun
			_, c, _ := measureArtifact(t, code, m[1])
			noLean = false
			if legacyRun {
				legacy = append(legacy, c)
			} else {
				lean = append(lean, c)
			}
		}
		gated, _, err := gateCode(code, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := sandbox.ParseSignature(sandbox.Source{Code: gated, Func: m[1]})
		if err != nil {
			t.Fatal(err)
		}
		tc, err := shared.builder.toolchain()
		if err != nil {
			t.Fatal(err)
		}
		g := callGuest(gated, sig)
		bin, err := shared.builder.goBuild(context.Background(), tc, g)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		tmp := t.TempDir()
		if err := writeModule(tmp, filepath.Join(tmp, "m"+moduleExt), bin); err != nil {
			t.Fatal(err)
		}
		gz = append(gz, time.Since(start))
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2].Round(time.Millisecond) }
	t.Logf("cold compile over %d HumanEval artifacts, alternating: lean median %v, encoding/json median %v; gzip of the module median %v",
		len(lean), med(lean), med(legacy), med(gz))
}

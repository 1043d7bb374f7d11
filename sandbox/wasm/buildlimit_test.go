package wasm

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

// TestBuildBounds checks that the go build of an artifact is bounded: code that makes the
// compiler exhaust the data limit is an intrinsic memory error that says so, and the build after
// it (the warm-up already done) works.
func TestBuildBounds(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the go build data limit is set with prlimit, which only Linux has")
	}
	sb, err := New(Options{CacheDir: testCacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), warmTimeout+buildTimeout)
	defer cancel()
	// 1 GiB of static data: the compiler materializes it and runs out of its data limit.
	big := "package artifact\n\nvar x = [1 << 30]byte{1<<30 - 1: 1}\n\nfunc At(i int) int { return int(x[i]) }\n"
	start := time.Now()
	_, err = sb.Compile(ctx, sandbox.Source{Code: big})
	t.Logf("refused after %v: %v", time.Since(start), err)
	e := sandbox.AsError(err)
	if e == nil || e.Kind != sandbox.KindMemory || !strings.Contains(e.Message, "the build of this code exceeded 1024 MB") || e.Hint == "" {
		t.Fatalf("err = %v, want a memory error naming the build's limit", err)
	}
	if !sb.builder.warmCall.Load() {
		t.Fatal("the warm-up build did not run first")
	}
	p, err := sb.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Inc(n int) int { return n + 1 }\n"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := sb.Run(ctx, p, sandbox.Input{Args: []byte(`[41]`)})
	if err != nil || string(out.Value) != "42" {
		t.Fatalf("after the refused build: %s, %v", out.Value, err)
	}
}

// TestBuildDeadlineIsTheCodes checks the classification of a build stopped by its deadline (a
// deadline in the past stands in for a slow build).
func TestBuildDeadlineIsTheCodes(t *testing.T) {
	tc, err := shared.builder.toolchain()
	if err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	g, err := warmGuest(ctx, tc, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = shared.builder.runGoBuild(ctx, tc, g, buildTimeout, false)
	e := sandbox.AsError(err)
	if e == nil || e.Kind != sandbox.KindDeadline || !strings.Contains(e.Message, "the build of this code exceeded 1m0s") {
		t.Fatalf("err = %v, want a deadline error naming the build's bound", err)
	}
}

package wasm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/wasm"
)

func cacheDir() string {
	if d := os.Getenv("FORGE_WASM_TEST_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "forge-test")
}

// A program is built and compiled once, then every Run is a call into a pooled instance.
func ExampleSandbox_Run() {
	sb, err := wasm.New(wasm.Options{CacheDir: cacheDir()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	ctx := context.Background()
	p, err := sb.Compile(ctx, sandbox.Source{Code: `package artifact

func Add(a, b int) int { return a + b }
`})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := sb.Run(ctx, p, sandbox.Input{Args: []byte(`{"a": 40, "b": 2}`)})
	fmt.Println(string(out.Value), err)
	// Output: 42 <nil>
}

// Runaway code is stopped at its deadline, and the error says so.
func ExampleSandbox_Run_deadline() {
	sb, err := wasm.New(wasm.Options{CacheDir: cacheDir()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	ctx := context.Background()
	p, err := sb.Compile(ctx, sandbox.Source{Code: `package artifact

func Spin() int {
	n := 0
	for n >= 0 {
		n = (n + 1) % 1000
	}
	return n
}
`})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = sb.Run(ctx, p, sandbox.Input{Limits: sandbox.Limits{Timeout: 50 * time.Millisecond}})
	fmt.Println(sandbox.KindOf(err))
	// Output: deadline
}

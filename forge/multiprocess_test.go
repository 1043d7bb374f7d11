package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

const workerEnv = "FORGE_FORGE_TEST_WORKER"

func TestMain(m *testing.M) {
	yaegi.MaybeServeWorker() // the test binary doubles as the isolation worker
	if os.Getenv(workerEnv) != "" {
		os.Exit(forgeWorker(os.Getenv("FORGE_TEST_STORE"), os.Getenv("FORGE_TEST_CASSETTE")))
	}
	code := m.Run()
	removeManyStores() // bench_test.go's stores, shared by a benchmark's runs
	os.Exit(code)
}

// slowProvider makes generation take long enough that two processes are cold at the same time.
type slowProvider struct{ provider.Provider }

func (p slowProvider) Generate(ctx context.Context, r provider.Request) (provider.Answer, error) {
	time.Sleep(300 * time.Millisecond)
	return p.Provider.Generate(ctx, r)
}

// forgeWorker calls text.upper once and prints "provider_calls N value V".
// With no cassette it has no provider at all.
func forgeWorker(store, cassettePath string) int {
	var p provider.Provider
	if cassettePath != "" {
		c, err := replay.Open(cassettePath)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		p = slowProvider{c}
	}
	f, err := Open(Options{Store: store, Provider: p, DefaultSandbox: "yaegi"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"both"}`))
	if !o.OK {
		fmt.Fprintln(os.Stderr, o.Err)
		return 1
	}
	fmt.Printf("provider_calls %d value %s\n", o.Meta.ProviderCalls, o.Value)
	return 0
}

func TestTwoProcessesForgeOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	store := t.TempDir()
	cas := filepath.Join(t.TempDir(), "cassette.jsonl")
	lines := []string{}
	for i := 1; i <= 2; i++ { // a second answer exists, so a second generation would not fail: it must not happen
		b, _ := json.Marshal(line{Role: "text", Method: "upper", Kind: "generate", Attempt: i, Code: upperOK})
		lines = append(lines, string(b))
	}
	require.NoError(t, os.WriteFile(cas, []byte(strings.Join(lines, "\n")), 0o644))
	f := openForge(t, store, nil)
	require.NoError(t, f.AddRole(textContract()))

	outs := make([]string, 2)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), workerEnv+"=1", "FORGE_TEST_STORE="+store, "FORGE_TEST_CASSETTE="+cas)
			out, err := cmd.CombinedOutput()
			assert.NoError(t, err, string(out))
			outs[i] = strings.TrimSpace(string(out))
		}(i)
	}
	wg.Wait()
	total := 0
	for _, o := range outs {
		var n int
		var v string
		_, err := fmt.Sscanf(o, "provider_calls %d value %s", &n, &v)
		require.NoError(t, err, o)
		assert.Equal(t, `"BOTH"`, v)
		total += n
	}
	assert.Equal(t, 1, total, "exactly one generation across both processes: %v", outs)
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, 1, art.Generation)
	rep, err := f.Store().(registry.Maintainer).Doctor()
	require.NoError(t, err)
	assert.False(t, rep.Damaged())
	entries, _ := os.ReadDir(filepath.Join(store, "tools", "text"))
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), ".tmp-"), "partial file left: %s", e.Name())
	}
}

func TestCrossProcessReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	store := t.TempDir()
	f := openForge(t, store, cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}))
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"forged here"}`)).OK)
	require.NoError(t, f.Close())

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"=1", "FORGE_TEST_STORE="+store, "FORGE_TEST_CASSETTE=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, `provider_calls 0 value "BOTH"`, strings.TrimSpace(string(out)), "another process reuses the artifact with no provider")
}

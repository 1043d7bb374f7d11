package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// cliTestScheme is a store backend registered by this test file only: a directory store seen
// through registry.Backend alone (not a registry.Maintainer), under its own URL scheme, with
// LocalDir taken from OpenOptions. A command that works on a clitest:// store goes through
// registry.OpenBackend and the Backend interface, as it would on the fleet store.
const cliTestScheme = "clitest"

// cliTestCalls counts what the commands asked of clitest:// stores.
var cliTestCalls struct {
	opens, closes, lookups, loads, updates, summaries atomic.Int64
	client                                            atomic.Value // the last OpenOptions.ClientName
}

func init() {
	registry.RegisterBackend(cliTestScheme, func(url string, o registry.OpenOptions) (registry.Backend, error) {
		dir := strings.TrimPrefix(url, cliTestScheme+"://")
		s, err := registry.OpenWith(dir, registry.OpenOptions{MustExist: o.MustExist})
		if err != nil {
			return nil, err
		}
		local := o.LocalDir
		if local == "" {
			local = dir
		}
		cliTestCalls.opens.Add(1)
		cliTestCalls.client.Store(o.ClientName)
		return &cliTestBackend{Backend: s, url: url, local: local}, nil
	})
}

type cliTestBackend struct {
	registry.Backend // the interface only: the directory store's Doctor, Quarantined... stay hidden
	url, local       string
}

func (b *cliTestBackend) Location() string { return b.url }
func (b *cliTestBackend) LocalDir() string { return b.local }
func (b *cliTestBackend) Lookup(role, method string) (*registry.Artifact, bool) {
	cliTestCalls.lookups.Add(1)
	return b.Backend.Lookup(role, method)
}
func (b *cliTestBackend) Load(role, method string) (*registry.Artifact, error) {
	cliTestCalls.loads.Add(1)
	return b.Backend.Load(role, method)
}
func (b *cliTestBackend) Update(role, method string, fn func(a *registry.Artifact, exists bool) error) (*registry.Artifact, error) {
	cliTestCalls.updates.Add(1)
	return b.Backend.Update(role, method, fn)
}
func (b *cliTestBackend) Summaries() ([]registry.Summary, error) {
	cliTestCalls.summaries.Add(1)
	return b.Backend.Summaries()
}
func (b *cliTestBackend) Close() error {
	cliTestCalls.closes.Add(1)
	return b.Backend.Close()
}

func TestStoreURLWithoutBackend(t *testing.T) {
	code, out, errOut := runCLI(t, "--store", "foo://x", "ls")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, errOut, "no backend for foo://")
	assert.Contains(t, errOut, "pass a directory")
	code, _, errOut = runCLI(t, "--store", "foo://user:secret@x", "role", "ls")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no backend for foo://")
	assert.NotContains(t, errOut, "secret", "the URL's secret is redacted")

	t.Setenv("FORGE_STORE", "foo://x")
	code, _, errOut = runCLI(t, "ls")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no backend for foo://")
}

// TestCLIOnAnotherBackend runs the everyday commands on a store that is reached only through
// registry.OpenBackend and registry.Backend: the CLI does not depend on the directory store.
func TestCLIOnAnotherBackend(t *testing.T) {
	t.Setenv("FORGE_PROVIDER", "")
	dir := t.TempDir()
	cas := filepath.Join(t.TempDir(), "cassette.jsonl")
	require.NoError(t, os.WriteFile(cas, []byte(upperCassette), 0o644))
	// The artifact exists: generated through the directory store.
	code, _, errOut := runCLI(t, "--store", dir, "role", "add", "--role", "text", "--purpose", "string utilities")
	require.Equal(t, 0, code, errOut)
	code, out, errOut := runCLI(t, "--store", dir, "call", "text", "upper", "s=hi", "--provider=replay:"+cas)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "\"HI\"\n", out)

	url := cliTestScheme + "://" + dir
	local := t.TempDir()
	t.Setenv("FORGE_LOCAL_DIR", local)
	s := func(args ...string) []string { return append([]string{"--store", url}, args...) }
	opens, closes := cliTestCalls.opens.Load(), cliTestCalls.closes.Load()

	sums := cliTestCalls.summaries.Load()
	code, out, errOut = runCLI(t, s("ls")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "text")
	assert.Contains(t, out, "upper")
	assert.Greater(t, cliTestCalls.summaries.Load(), sums, "ls lists through the backend")
	assert.Equal(t, "forge ls", cliTestCalls.client.Load(), "the store's servers see which command connects")

	reads := cliTestCalls.lookups.Load() + cliTestCalls.loads.Load()
	code, out, errOut = runCLI(t, s("call", "text", "upper", "s=yo")...) // no provider: the stored code runs
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "\"YO\"\n", out)
	assert.Greater(t, cliTestCalls.lookups.Load()+cliTestCalls.loads.Load(), reads, "call reads the artifact through the backend")
	assert.Equal(t, "forge call", cliTestCalls.client.Load())
	ev, err := os.ReadFile(filepath.Join(local, "events", "forge.jsonl"))
	require.NoError(t, err, "the event log is in the backend's LocalDir ($FORGE_LOCAL_DIR)")
	assert.Contains(t, string(ev), `"upper"`)

	updates := cliTestCalls.updates.Load()
	code, out, errOut = runCLI(t, s("bless", "text", "upper")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "blessed")
	assert.Greater(t, cliTestCalls.updates.Load(), updates, "bless writes through the backend")
	a, err := registry.Open(dir)
	require.NoError(t, err)
	art, err := a.Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, registry.Blessed, art.Lifecycle, "the bless reached the store behind the backend")

	code, out, errOut = runCLI(t, s("history", "text", "upper")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "gen-1")

	// What only a directory store offers fails with the store's name and what to do.
	for _, args := range [][]string{{"doctor"}, {"quarantine", "ls"}, {"quarantine", "dismiss", "x"}} {
		code, _, errOut = runCLI(t, s(args...)...)
		assert.Equal(t, 1, code, args)
		assert.Contains(t, errOut, "not supported by "+url, args)
		assert.Contains(t, errOut, "--store DIR", args)
	}

	// forge run and forge test put their sandbox caches in the store's local directory.
	d, err := (&app{storeFlag: url}).localStoreDir()
	require.NoError(t, err)
	assert.Equal(t, local, d, "$FORGE_LOCAL_DIR")
	t.Setenv("FORGE_LOCAL_DIR", "")
	d, err = (&app{storeFlag: url}).localStoreDir()
	require.NoError(t, err)
	assert.Equal(t, dir, d, "the backend's own LocalDir")
	d, err = (&app{storeFlag: dir}).localStoreDir()
	require.NoError(t, err)
	assert.Equal(t, dir, d, "a directory store is its own local directory")

	assert.Equal(t, cliTestCalls.opens.Load()-opens, cliTestCalls.closes.Load()-closes, "every command closes the store it opened")
	assert.Greater(t, cliTestCalls.opens.Load(), opens)
}

func TestStoreURLOrDirectory(t *testing.T) {
	// Commands that build a directory store of their own refuse a URL, without echoing it.
	for _, args := range [][]string{{"demo"}, {"bench", "--methods", "1"}} {
		code, _, errOut := runCLI(t, append([]string{"--store", "foo://user:secret@x"}, args...)...)
		assert.Equal(t, 2, code, args)
		assert.Contains(t, errOut, "names a store URL", args)
		assert.NotContains(t, errOut, "secret", args)
	}
}

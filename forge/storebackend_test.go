package forge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// forgeTestScheme is a store backend registered by this test file only: a directory store seen
// through registry.Backend alone (no registry.Maintainer), whose LocalDir is OpenOptions.LocalDir.
const forgeTestScheme = "forgetest"

var forgeTestBackends struct {
	mu     sync.Mutex
	byURL  map[string]*forgeTestBackend
	opened []registry.OpenOptions
}

func init() {
	forgeTestBackends.byURL = map[string]*forgeTestBackend{}
	registry.RegisterBackend(forgeTestScheme, func(url string, o registry.OpenOptions) (registry.Backend, error) {
		s, err := registry.OpenWith(strings.TrimPrefix(url, forgeTestScheme+"://"), registry.OpenOptions{})
		if err != nil {
			return nil, err
		}
		b := &forgeTestBackend{Backend: s, url: url, local: o.LocalDir}
		forgeTestBackends.mu.Lock()
		defer forgeTestBackends.mu.Unlock()
		forgeTestBackends.byURL[url] = b
		forgeTestBackends.opened = append(forgeTestBackends.opened, o)
		return b, nil
	})
}

type forgeTestBackend struct {
	registry.Backend
	url, local string
	closes     atomic.Int64
	recorders  atomic.Int64
}

func (b *forgeTestBackend) Location() string { return b.url }
func (b *forgeTestBackend) LocalDir() string { return b.local }
func (b *forgeTestBackend) NewRecorder(d time.Duration) registry.MetricsRecorder {
	b.recorders.Add(1)
	return b.Backend.NewRecorder(d)
}
func (b *forgeTestBackend) Close() error {
	b.closes.Add(1)
	return b.Backend.Close()
}

func backendAt(t *testing.T, url string) *forgeTestBackend {
	t.Helper()
	forgeTestBackends.mu.Lock()
	defer forgeTestBackends.mu.Unlock()
	b := forgeTestBackends.byURL[url]
	require.NotNil(t, b, "no %s store was opened at %s", forgeTestScheme, url)
	return b
}

// TestOpenOnAnotherBackend: forge.Open reaches a store by URL through registry.OpenBackend, keeps
// its machine-local state in the backend's LocalDir, records metrics through the backend's
// recorder, and closes the store when it closes.
func TestOpenOnAnotherBackend(t *testing.T) {
	dir, local := t.TempDir(), t.TempDir()
	url := forgeTestScheme + "://" + dir
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, url, p, func(o *Options) { o.LocalDir, o.ClientName = local, "forge test" })
	b := backendAt(t, url)
	assert.Same(t, b, f.Store())
	assert.Equal(t, int64(1), b.recorders.Load(), "the metrics recorder is the backend's")
	forgeTestBackends.mu.Lock()
	o := forgeTestBackends.opened[len(forgeTestBackends.opened)-1]
	forgeTestBackends.mu.Unlock()
	assert.Equal(t, local, o.LocalDir)
	assert.Equal(t, "forge test", o.ClientName)

	require.NoError(t, f.AddRole(textContract()))
	out := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"hi"}`))
	require.True(t, out.OK, "%+v", out.Err)
	out = f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"yo"}`))
	require.True(t, out.OK, "%+v", out.Err)
	assert.Equal(t, SourcePersisted, out.Meta.ProgramSource)

	st, err := f.Stats(time.Time{})
	require.NoError(t, err)
	assert.EqualValues(t, 2, st.Overall.Calls, "the stats read the event log in LocalDir")
	_, err = os.Stat(filepath.Join(local, "events", "forge.jsonl"))
	require.NoError(t, err, "the event log is in LocalDir")
	_, err = os.Stat(filepath.Join(dir, "events"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing machine-local is written into the shared store")

	_, err = f.Maintainer()
	assert.ErrorIs(t, err, registry.ErrUnsupported)
	assert.ErrorContains(t, err, "not supported by "+url)

	require.NoError(t, f.Close())
	require.NoError(t, f.Close())
	assert.Equal(t, int64(1), b.closes.Load(), "Close closes the store once")

	a, err := registry.Open(dir)
	require.NoError(t, err)
	art, err := a.Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, int64(2), art.SuccessCount, "the calls' outcomes were flushed into the store behind the backend")
}

func TestOpenClosesTheStoreItCannotUse(t *testing.T) {
	url := forgeTestScheme + "://" + t.TempDir()
	_, err := Open(Options{Store: url, LocalDir: t.TempDir(), DefaultSandbox: "no-such-sandbox"})
	require.Error(t, err)
	assert.Equal(t, int64(1), backendAt(t, url).closes.Load())

	_, err = Open(Options{Store: "zz://host/x"})
	assert.ErrorContains(t, err, "no backend for zz://")

	m, err := MaintainerOf(openForge(t, t.TempDir(), nil).Store())
	require.NoError(t, err, "a directory store is a Maintainer")
	assert.NotNil(t, m)
}

package forge

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

func TestOptionsFromEnvSandboxKnobs(t *testing.T) {
	env := map[string]string{"FORGE_POOL_SIZE": "3", "FORGE_IDLE_TIMEOUT": "5s", "FORGE_MAX_WORKERS": "12"}
	o, err := OptionsFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, 3, o.SandboxPoolSize)
	assert.Equal(t, 5*time.Second, o.SandboxIdleTimeout)
	assert.Equal(t, 12, o.SandboxMaxWorkers)

	env = map[string]string{"FORGE_IDLE_TIMEOUT": "-1s"} // never trim
	o, err = OptionsFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, -time.Second, o.SandboxIdleTimeout)

	for k, v := range map[string]string{"FORGE_POOL_SIZE": "0", "FORGE_MAX_WORKERS": "many", "FORGE_IDLE_TIMEOUT": "soon"} {
		_, err := OptionsFromEnv(func(name string) string {
			if name == k {
				return v
			}
			return ""
		})
		assert.ErrorContains(t, err, k, "%s=%s must be refused, naming the variable", k, v)
	}
}

var (
	probeOnce   sync.Once
	probeConfig = make(chan sandbox.Config, 1)
)

// The forge hands its sandbox options to every backend it builds.
func TestSandboxConfigReachesBackend(t *testing.T) {
	var got sandbox.Config
	probeOnce.Do(func() { // a name registers once per process (-count=N runs the test N times)
		sandbox.Register(sandbox.Backend{Name: "cfgprobe", Summary: "test: records its config",
			New: func(c sandbox.Config) (sandbox.Sandbox, error) {
				probeConfig <- c
				return yaegi.New(yaegi.Options{PoolSize: c.PoolSize}), nil
			}})
	})
	f := openForge(t, t.TempDir(), nil, func(o *Options) {
		o.DefaultSandbox = "cfgprobe"
		o.SandboxPoolSize, o.SandboxIdleTimeout, o.SandboxMaxWorkers = 3, 7*time.Second, 11
	})
	_, err := f.sandbox("cfgprobe")
	require.NoError(t, err)
	got = <-probeConfig
	assert.Equal(t, 3, got.PoolSize)
	assert.Equal(t, 7*time.Second, got.IdleTimeout)
	assert.Equal(t, 11, got.MaxWorkers)
	assert.Equal(t, f.Store().LocalDir()+"/cache", got.CacheDir)
}

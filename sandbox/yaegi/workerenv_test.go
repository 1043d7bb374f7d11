package yaegi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// envDumpEnv makes a worker of this test binary write its environment to the file it names
// before it serves (TestWorkerEnvironmentIsMinimal).
const envDumpEnv = "FORGE_TEST_WORKER_ENV_DUMP"

func init() {
	if p := os.Getenv(envDumpEnv); p != "" && os.Getenv(WorkerEnv) != "" {
		_ = os.WriteFile(p, []byte(strings.Join(os.Environ(), "\n")), 0o600)
	}
}

// TestWorkerEnvironmentIsMinimal: a worker process runs generated code, so it gets none of this
// process's secrets or settings: no provider API keys, no FORGE_* variables but its own, nothing
// else of the parent's but the few the Go runtime reads.
func TestWorkerEnvironmentIsMinimal(t *testing.T) {
	secrets := map[string]string{
		"OPENAI_API_KEY":    "sk-openai-secret",
		"ANTHROPIC_API_KEY": "sk-ant-secret",
		"FORGE_ADMIN_TOKEN": "admin-secret",
		"FORGE_CLIENTS":     "/etc/forge/clients.yaml",
		"FORGE_STORE":       "nats://user:store-secret@127.0.0.1:4222/forge",
		"NATS_TOKEN":        "nats-secret",
		"SOME_PARENT_VAR":   "parent-only",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	dump := filepath.Join(t.TempDir(), "env")
	s := New(Options{Isolation: sandbox.IsolationProcess, Worker: WorkerConfig{Env: []string{envDumpEnv + "=" + dump}}})
	defer s.Close()
	p, err := s.Compile(context.Background(), sandbox.Source{Code: "package artifact\n\nfunc Id(s string) string { return s }\n"})
	require.NoError(t, err)
	defer p.Close()
	out, err := s.Run(context.Background(), p, sandbox.Input{Args: []byte(`{"s":"ok"}`)})
	require.NoError(t, err)
	assert.JSONEq(t, `"ok"`, string(out.Value))
	b, err := os.ReadFile(dump)
	require.NoError(t, err, "the worker wrote no environment dump")
	env := string(b)
	for k, v := range secrets {
		assert.NotContains(t, env, k+"=", "the worker inherited %s", k)
		assert.NotContains(t, env, v)
	}
	for _, line := range strings.Split(env, "\n") {
		k, _, _ := strings.Cut(line, "=")
		if strings.HasPrefix(k, "FORGE_") {
			assert.Contains(t, []string{WorkerEnv, workerMemoryEnv, workerCPUEnv, envDumpEnv}, k, "a FORGE_ variable that is not the worker's own")
		}
	}
	assert.Contains(t, env, WorkerEnv+"=1")
	assert.Contains(t, env, "TZ="+hostZone, "the zone is kept (the hostile zone tests need it)")
}

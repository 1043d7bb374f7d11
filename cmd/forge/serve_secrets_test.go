package main

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEmbeddedServeStartupRedactsStorePassword: `forge serve --nats-embedded` with a store URL
// that carries a password (or a token) prints and logs the URL with the credentials redacted,
// on every start-up line.
func TestEmbeddedServeStartupRedactsStorePassword(t *testing.T) {
	path, err := natsForgeBinary()
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	for name, cred := range map[string]string{"password": "forge:S3cretPassw0rd", "token": "S3cretPassw0rd"} {
		t.Run(name, func(t *testing.T) {
			hp := "127.0.0.1:" + strconv.Itoa(port)
			store := "nats://" + cred + "@" + hp + "/forge"
			cmd := exec.Command(path, "serve", "--nats-embedded", filepath.Join(t.TempDir(), "nats"), "--nats-listen", hp,
				"--addr", "127.0.0.1:0", "--no-mcp", "--store", store)
			cmd.Env = append(os.Environ(), "FORGE_PROVIDER=", "FORGE_SANDBOX=yaegi", "FORGE_STORE=", "FORGE_LOCAL_DIR="+t.TempDir())
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			var all strings.Builder
			printed := &lockedWriter{w: &all}
			cmd.Stderr = printed
			require.NoError(t, cmd.Start())
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			serving := make(chan struct{})
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					printed.Write([]byte(sc.Text() + "\n"))
					if strings.HasPrefix(sc.Text(), "forge serving on ") {
						close(serving)
					}
				}
			}()
			select {
			case <-serving:
			case <-time.After(time.Minute): // a hang bound
				printed.mu.Lock()
				t.Fatalf("forge serve did not start:\n%s", all.String())
			}
			printed.mu.Lock()
			lines := all.String()
			printed.mu.Unlock()
			assert.NotContains(t, lines, "S3cretPassw0rd", "a start-up line shows the store's credentials")
			assert.Contains(t, lines, "REDACTED@"+hp, "the store URL is still shown, redacted")
		})
	}
}

// TestServeClientsFileRefusedWithReason: a clients file serve cannot use stops it at start with
// what to fix (and never starts it open to everyone).
func TestServeClientsFileRefusedWithReason(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "clients.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("- name: a\n  token: short\n  roles: \"*\"\n"), 0o600))
	env := []string{"FORGE_STORE=" + t.TempDir(), "FORGE_PROVIDER="}
	r := bin(t, nil, env, "serve", "--addr", "127.0.0.1:0", "--clients", bad)
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stderr, "at least 16 characters")
	r = bin(t, nil, append(env, "FORGE_CLIENTS="+filepath.Join(t.TempDir(), "missing.yaml")), "serve", "--addr", "127.0.0.1:0")
	assert.NotEqual(t, 0, r.code, "$FORGE_CLIENTS names a file that is not there")
	assert.Contains(t, r.stderr, "clients file")
}

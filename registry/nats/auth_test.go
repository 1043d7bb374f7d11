package nats

import (
	"strings"
	"testing"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/nats-io/nats-server/v2/server"
)

// authServer starts a JetStream server that requires user/password or a token.
func authServer(t *testing.T, user, pass, token string) string {
	t.Helper()
	o := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		Username: user, Password: pass, Authorization: token}
	srv, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(embedded.ReadyTimeout) {
		t.Fatal("server not ready")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return strings.TrimPrefix(srv.ClientURL(), "nats://")
}

// TestCredentialsReachTheServer: the parsed credentials authenticate (URL and environment), and a
// refused connection's error names the server but not the secret.
func TestCredentialsReachTheServer(t *testing.T) {
	const pass, tok = "pw-S3CRET-x", "tok-S3CRET-y"
	userHost := authServer(t, "alice", pass, "")
	tokHost := authServer(t, "", "", tok)
	ok := []struct {
		url string
		env map[string]string
	}{
		{"nats://alice:" + pass + "@" + userHost + "/a", nil},
		{"nats://" + userHost + "/a", map[string]string{"NATS_USER": "alice", "NATS_PASSWORD": pass}},
		{"nats://" + tok + "@" + tokHost + "/a", nil},
		{"nats://" + tokHost + "/a", map[string]string{"NATS_TOKEN": tok}},
	}
	for _, c := range ok {
		cfg, err := ParseURL(c.url, func(k string) string { return c.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(testCtx(t), cfg, "forge-auth-test")
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		s.Close()
	}
	for _, bad := range []string{
		"nats://alice:wrong-" + pass + "@" + userHost + "/a",
		"nats://wrong-" + tok + "@" + tokHost + "/a",
	} {
		cfg, err := ParseURL(bad, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cfg.Connect("forge-auth-test")
		if err == nil {
			t.Fatalf("%s: connected with a wrong secret", cfg)
		}
		if strings.Contains(err.Error(), "S3CRET") {
			t.Fatalf("connection error prints the secret: %v", err)
		}
		if !strings.Contains(err.Error(), "REDACTED") || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Errorf("connection error should name the redacted credentials and the refusal: %v", err)
		}
	}
}

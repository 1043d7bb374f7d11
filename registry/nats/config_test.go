package nats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/artifactforge/forge/registry"
)

func noEnv(string) string { return "" }

func TestParseURL(t *testing.T) {
	cases := []struct {
		raw  string
		want Config
	}{
		{"nats://127.0.0.1:4222/fleet", Config{Servers: []string{"nats://127.0.0.1:4222"}, Name: "fleet"}},
		{"nats://h1:4222,h2:5222/prod-1?replicas=3", Config{Servers: []string{"nats://h1:4222", "nats://h2:5222"}, Name: "prod-1", Replicas: 3}},
		{"nats://localhost", Config{Servers: []string{"nats://localhost:4222"}, Name: DefaultName}},
		{"nats://alice:s3cr%40t@h:1/x", Config{Servers: []string{"nats://h:1"}, Name: "x", User: "alice", Password: "s3cr@t"}},
		{"nats://tok123@h:1/x", Config{Servers: []string{"nats://h:1"}, Name: "x", Token: "tok123"}},
		{"tls://h:1/x?ca=/etc/ca.pem", Config{Servers: []string{"tls://h:1"}, Name: "x", TLS: true, TLSCA: "/etc/ca.pem"}},
		{"nats://h:1/x?creds=/c/u.creds&cert=/c.pem&key=/k.pem", Config{Servers: []string{"tls://h:1"}, Name: "x", Creds: "/c/u.creds", TLS: true, TLSCert: "/c.pem", TLSKey: "/k.pem"}},
		{"nats://[::1]:4222/x", Config{Servers: []string{"nats://[::1]:4222"}, Name: "x"}},
	}
	for _, c := range cases {
		got, err := ParseURL(c.raw, noEnv)
		if err != nil {
			t.Errorf("%s: %v", c.raw, err)
			continue
		}
		if fmt.Sprint(*got) != fmt.Sprint(c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.raw, *got, c.want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:4222/x", "http://h:1/x", "nats:///x", "nats://h:notaport/x", "nats://h:1/bad.name", "nats://h:1/x?replicas=2", "nats://h:1/x?color=red", "nats://h:1/x?cert=/c.pem"} {
		if _, err := ParseURL(bad, noEnv); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestParseURLEnvironment(t *testing.T) {
	env := map[string]string{"NATS_USER": "bob", "NATS_PASSWORD": "envpass", "NATS_CREDS": "/e.creds", "NATS_CA": "/ca.pem"}
	got, err := ParseURL("nats://h:1/x", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got.User != "bob" || got.Password.Reveal() != "envpass" || got.Creds != "/e.creds" || got.TLSCA != "/ca.pem" || !got.TLS {
		t.Fatalf("environment not applied: %+v", got)
	}
	// Credentials in the URL win over the environment.
	got, err = ParseURL("nats://urltoken@h:1/x", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got.Token.Reveal() != "urltoken" || got.Password != "" || got.User != "" {
		t.Fatalf("URL token should win over NATS_USER/NATS_PASSWORD: %+v", got)
	}
}

// TestConfigNeverPrintsSecrets: every usual way of printing a config, and every parse error,
// leaves passwords and tokens out.
func TestConfigNeverPrintsSecrets(t *testing.T) {
	const pass, tok = "hunter2-PASSWORD", "tok-SECRET-42"
	withPass, err := ParseURL("nats://alice:"+pass+"@h:1/x", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	withTok, err := ParseURL("nats://"+tok+"@h:1/x", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	var outs []string
	for _, c := range []*Config{withPass, withTok} {
		j, _ := json.Marshal(c)
		var logBuf bytes.Buffer
		slog.New(slog.NewTextHandler(&logBuf, nil)).Info("store", "cfg", c, "password", c.Password, "token", c.Token)
		var jsonLog bytes.Buffer
		slog.New(slog.NewJSONHandler(&jsonLog, nil)).Info("store", "cfg", c, "password", c.Password, "token", c.Token)
		outs = append(outs, c.String(), fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c),
			fmt.Sprintf("%v %+v %#v", *c, *c, *c), string(j), logBuf.String(), jsonLog.String())
	}
	// Parse errors quote the URL: the credentials must not be in them.
	for _, bad := range []string{
		"nats://alice:" + pass + "@h:notaport/x",
		"nats://alice:" + pass + "@h:1/bad.name",
		"http://alice:" + pass + "@h:1/x",
		"nats://" + tok + "@h:1/x?color=red",
		"nats://alice:" + pass + "/with/slash@h:1/x?replicas=7",
		"alice:" + pass + "@h:1/x",
	} {
		_, err := ParseURL(bad, noEnv)
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		outs = append(outs, err.Error())
	}
	for _, o := range outs {
		if strings.Contains(o, pass) || strings.Contains(o, tok) || strings.Contains(o, "PASSWORD") || strings.Contains(o, "SECRET") {
			t.Errorf("secret printed: %s", o)
		}
	}
	if !strings.Contains(withPass.String(), "user alice") || !strings.Contains(withPass.String(), "password "+Redacted) {
		t.Errorf("String should name the user and say the password is redacted: %s", withPass)
	}
	if withPass.Password.Reveal() != pass || withTok.Token.Reveal() != tok {
		t.Error("Reveal lost the secret")
	}
}

var natsKey = regexp.MustCompile(`^[-/_=a-zA-Z0-9]+$`)

func TestEscapeToken(t *testing.T) {
	for _, name := range []string{"text_tools", "upper", "a", strings.Repeat("z", 64), "forge", "go.dev", "Web Scraping", "ünïcode", "a=b", "../x", "x.y.z", "-", "==3D"} {
		tok, err := EscapeToken(name)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if !natsKey.MatchString(tok) {
			t.Errorf("%q -> %q: not a single valid key token", name, tok)
		}
		if registry.ValidateName("role", name) == nil && tok != name {
			t.Errorf("valid name %q escaped to %q: registry names must stay readable", name, tok)
		}
		back, err := UnescapeToken(tok)
		if err != nil || back != name {
			t.Errorf("%q -> %q -> %q, %v", name, tok, back, err)
		}
	}
	if _, err := EscapeToken(""); err == nil {
		t.Error("empty name accepted")
	}
	// One-to-one: names that differ only in escapable bytes get different tokens.
	a, _ := EscapeToken("a.b")
	b, _ := EscapeToken("a_b")
	c, _ := EscapeToken("a=2Eb")
	if a == b || a == c {
		t.Errorf("collision: %q %q %q", a, b, c)
	}
}

// Package e2e drives forge serve's operator console in a real headless Chromium (Debian's
// chromium, driven by playwright-core from npm: drive.mjs). `make ui-deps` installs both; without
// them the test skips and says so, unless FORGE_UI_REQUIRE=1 (CI), where it fails.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	_ "github.com/artifactforge/forge/forge/all" // the sandboxes, providers and stores the binary ships
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/server"
)

const (
	upperV1 = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"
	upperV2 = "package artifact\n\nimport \"strings\"\n\n// Upper answers as before, on a copy of s <img src=x onerror=\"window.__xss=1\">.\nfunc Upper(s string) string {\n\tc := strings.Clone(s)\n\treturn strings.ToUpper(c)\n}\n"
	lowerV1 = "package artifact\n\nimport \"strings\"\n\nfunc Lower(s string) string { return strings.ToLower(s) }\n"
	titleV1 = "package artifact\n\nimport \"strings\"\n\nfunc Title(s string) string { return strings.ToTitle(s) }\n"
	token   = "console-admin-token"
)

// bulk is how many artifacts the second store holds: the 10,000 (FORGE_UI_BULK=N for
// fewer while working on the test).
func bulk() int {
	if n, err := strconv.Atoi(os.Getenv("FORGE_UI_BULK")); err == nil && n > 0 {
		return n
	}
	return 10000
}

// deps returns why the browser test cannot run here ("" when it can).
func deps() string {
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		return "no Chromium at " + chromium
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "no node on PATH"
	}
	if _, err := os.Stat(filepath.Join("node_modules", "playwright-core", "package.json")); err != nil {
		return "no playwright-core in server/ui/e2e/node_modules"
	}
	return ""
}

func contract() registry.Contract {
	return registry.Contract{Role: "text", Purpose: "string utilities <script>window.__xss=2</script>",
		Methods:    map[string]string{"upper": "func Upper(s string) string", "lower": "func Lower(s string) string", "title": "func Title(s string) string"},
		Acceptance: &registry.Acceptance{Examples: []registry.Example{{Method: "upper", Args: json.RawMessage(`{"s":"go"}`), Expect: json.RawMessage(`"GO"`)}}}}
}

// openForge opens a forge on store whose scripted model writes the methods above (upper twice:
// its regeneration).
func openForge(t *testing.T, store string) *forge.Forge {
	t.Helper()
	var cassette []byte
	for _, l := range []struct {
		method, code string
		attempt      int
	}{{"upper", upperV1, 1}, {"upper", upperV2, 2}, {"lower", lowerV1, 1}, {"title", titleV1, 1}} {
		line, err := json.Marshal(map[string]any{"role": "text", "method": l.method, "kind": "generate", "attempt": l.attempt, "code": l.code,
			"usage": map[string]int{"input_tokens": 900, "output_tokens": 300}})
		require.NoError(t, err)
		cassette = append(append(cassette, line...), '\n')
	}
	p, err := replay.New("console.jsonl", cassette)
	require.NoError(t, err)
	f, err := forge.Open(forge.Options{Store: store, Provider: p, DefaultSandbox: "yaegi"})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, f.AddRole(contract()))
	return f
}

func serve(t *testing.T, f *forge.Forge) string {
	t.Helper()
	require.NoError(t, f.Watch())
	s := server.New(f, server.Options{AdminToken: token, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(s)
	t.Cleanup(func() { s.CloseStreams(); ts.Close() })
	return ts.URL
}

// TestConsoleInChromium is the "Done when": on a store built by a scripted model, the
// console shows every artifact with its lifecycle, an artifact's lineage diff, blesses with the
// token (refused without it), shows a change another forge makes arrive live, and pages through
// 10,000 artifacts; it saves a screenshot of each page (FORGE_UI_SHOTS=DIR keeps them there;
// else `go test -artifacts` keeps them under the test's output).
// The other process of the live step: the test binary run with changeEnv and storeEnv makes one
// change on the store with a forge of its own, and exits.
const (
	changeEnv = "FORGE_UI_E2E_CHANGE"
	storeEnv  = "FORGE_UI_E2E_STORE"
)

func TestMain(m *testing.M) {
	if what := os.Getenv(changeEnv); what != "" {
		if err := change(os.Getenv(storeEnv), what); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func change(store, what string) error {
	of, err := forge.Open(forge.Options{Store: store})
	if err != nil {
		return err
	}
	defer of.Close()
	switch what {
	case "quarantine text.lower":
		return of.Quarantine("text", "lower")
	case "lift text.lower":
		if o := of.LiftQuarantine(context.Background(), "text", "lower"); !o.OK {
			return o.Err
		}
		return nil
	}
	return fmt.Errorf("unknown change %q", what)
}

func TestConsoleInChromium(t *testing.T) {
	if why := deps(); why != "" {
		msg := "the console's browser test needs Chromium and playwright-core (" + why + "): run `make ui-deps` (as root: apt-get install chromium; npm ci in server/ui/e2e)"
		if os.Getenv("FORGE_UI_REQUIRE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ctx := context.Background()
	store := t.TempDir()
	f := openForge(t, store)
	for _, c := range []struct{ method, args string }{{"upper", `{"s":"a"}`}, {"upper", `{"s":"b"}`}, {"lower", `{"s":"A"}`}, {"title", `{"s":"x"}`}} {
		require.True(t, f.Call(ctx, "text", c.method, json.RawMessage(c.args)).OK, "%s", c.method)
	}
	require.False(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":5}`)).OK, "a failed call for the artifact page")
	o := f.RegenerateWith(ctx, "text", "upper", forge.RegenOptions{})
	require.True(t, o.OK, "%+v", o.Err)
	require.NoError(t, f.Quarantine("text", "title"))
	f.Flush()
	expect := map[string]string{}
	ls, err := forge.List(f.Store())
	require.NoError(t, err)
	for _, l := range ls {
		expect[l.Role+"."+l.Method] = string(l.Lifecycle)
	}
	require.Len(t, expect, 3)

	// The second store: bulk artifacts, copies of text.lower under other names, written as the
	// store writes them (one file each; the store's index is built on the first listing).
	start, nBulk := time.Now(), bulk()
	bstore := t.TempDir()
	bf := openForge(t, bstore)
	src, err := f.Store().Load("text", "lower")
	require.NoError(t, err)
	rs, err := registry.Open(bstore)
	require.NoError(t, err)
	for i := range nBulk {
		a := *src
		a.Role, a.Method = "bulk", fmt.Sprintf("m%05d", i)
		a.SuccessCount = int64(i % 97)
		b, err := json.Marshal(&a)
		require.NoError(t, err)
		p := rs.ArtifactPath(a.Role, a.Method)
		if i == 0 {
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		}
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	rs.Close()
	t.Logf("seeded %d artifacts in %v", nBulk, time.Since(start).Round(time.Millisecond))

	shots := os.Getenv("FORGE_UI_SHOTS")
	if shots == "" {
		shots = t.ArtifactDir()
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))
	exp, _ := json.Marshal(expect)
	cmd := exec.Command("node", "drive.mjs")
	cmd.Env = append(os.Environ(), "FORGE_UI_URL="+serve(t, f), "FORGE_UI_BULK_URL="+serve(t, bf), "FORGE_UI_TOKEN="+token,
		"FORGE_UI_SHOTS="+shots, "FORGE_UI_EXPECT="+string(exp), fmt.Sprintf("FORGE_UI_BULK_COUNT=%d", nBulk))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	// Another process (this test binary again, see TestMain) opens the same store and makes the
	// changes the page waits for: they reach the server through the store's watcher alone.
	other := func(what string) error {
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), changeEnv+"="+what, storeEnv+"="+store)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("the other process: %v: %s", err, out)
		}
		return nil
	}
	var result string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "CHANGE "):
			err := other(strings.TrimPrefix(line, "CHANGE "))
			require.NoError(t, err)
			_, err = io.WriteString(stdin, "OK\n")
			require.NoError(t, err)
		case strings.HasPrefix(line, "RESULT "):
			result = strings.TrimPrefix(line, "RESULT ")
		default:
			t.Log(line)
		}
	}
	err = cmd.Wait()
	require.NoError(t, err, "drive.mjs: %s", stderr.String())
	require.NotEmpty(t, result, "drive.mjs reported nothing: %s", stderr.String())
	t.Logf("measured in the browser: %s", result)
	t.Logf("screenshots in %s", shots)

	a, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	require.Equal(t, registry.Blessed, a.Lifecycle, "the console's bless reached the store")
}

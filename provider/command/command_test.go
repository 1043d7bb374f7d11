package command_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/command"
)

var _ provider.Provider = (*command.Provider)(nil)

// TestMain turns the test binary into the external program under test when it is started
// with -forge-helper MODE.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "-forge-helper" {
		os.Exit(helper(os.Args[2]))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	in, _ := io.ReadAll(os.Stdin)
	switch mode {
	case "answer":
		fmt.Printf("Sure, here is %s.%s:\n\n```go\npackage main\n\n// kind=%s attempt=%s model=%s\n// stdin=%q\nfunc Upper(s string) string { return s }\n```\n",
			os.Getenv("FORGE_ROLE"), os.Getenv("FORGE_METHOD"), os.Getenv("FORGE_REQUEST_KIND"),
			os.Getenv("FORGE_ATTEMPT"), os.Getenv("FORGE_MODEL"), in)
		return 0
	case "fail":
		fmt.Fprint(os.Stderr, strings.Repeat("noise ", 1000))
		fmt.Fprint(os.Stderr, "\nreal cause: model crashed\n")
		return 3
	case "sleep":
		time.Sleep(30 * time.Second)
		return 0
	case "prose":
		fmt.Println("I am not sure how to write that.")
		return 0
	}
	return 2
}

func newHelper(t *testing.T, mode string, timeout time.Duration) *command.Provider {
	t.Helper()
	p, err := command.New(command.Config{Program: os.Args[0], Args: []string{"-forge-helper", mode}, Timeout: timeout, Model: "helper-model"})
	require.NoError(t, err)
	return p
}

var upperReq = provider.Request{Kind: provider.Repair, Role: "text", Method: "upper", Attempt: 2,
	System: "You write Go artifacts.", Prompt: "Contract: upper-case a string.\n"}

func TestCommandAnswer(t *testing.T) {
	p := newHelper(t, "answer", time.Minute)
	a, err := p.Generate(context.Background(), upperReq)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(a.Code, "package artifact\n"), a.Code)
	assert.Contains(t, a.Code, "// kind=repair attempt=2 model=helper-model")
	wantStdin := fmt.Sprintf("// stdin=%q", "=== FORGE SYSTEM ===\nYou write Go artifacts.\n=== FORGE PROMPT ===\nContract: upper-case a string.\n=== FORGE END ===\n")
	assert.Contains(t, a.Code, wantStdin)
	assert.Contains(t, a.Raw, "Sure, here is text.upper")
	assert.Equal(t, "helper-model", a.Model)
}

func TestCommandFailures(t *testing.T) {
	tests := []struct {
		mode     string
		timeout  time.Duration
		kind     provider.ErrorKind
		contains []string
		is       error
	}{
		{mode: "fail", timeout: time.Minute, kind: provider.Unavailable, contains: []string{"exited with status 3", "real cause: model crashed", "stderr: …"}},
		{mode: "sleep", timeout: 300 * time.Millisecond, kind: provider.Unavailable, contains: []string{"timed out after 300ms"}, is: context.DeadlineExceeded},
		{mode: "prose", timeout: time.Minute, kind: provider.BadAnswer, contains: []string{"answered without Go code", "I am not sure"}, is: provider.ErrNoCode},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			_, err := newHelper(t, tt.mode, tt.timeout).Generate(context.Background(), upperReq)
			var pe *provider.Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.kind, pe.Kind)
			assert.Equal(t, "command", pe.Provider)
			for _, c := range tt.contains {
				assert.Contains(t, err.Error(), c)
			}
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.LessOrEqual(t, len(pe.Message), command.StderrTail+200, "stderr is cut to its tail")
		})
	}
}

func TestCommandCancelled(t *testing.T) {
	p := newHelper(t, "sleep", time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	_, err := p.Generate(ctx, upperReq)
	assert.True(t, errors.Is(err, context.Canceled), err)
	assert.Equal(t, provider.Unavailable, provider.KindOf(err))
}

func TestCommandProgramNotFound(t *testing.T) {
	_, err := command.New(command.Config{Program: "forge-no-such-program-xyz"})
	assert.Equal(t, provider.Misconfigured, provider.KindOf(err))
	assert.ErrorContains(t, err, `program "forge-no-such-program-xyz" not found`)
}

func TestSplit(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "llm -m qwen", want: []string{"llm", "-m", "qwen"}},
		{in: "  sh  -c 'cat > /dev/null; echo \"a b\"'  ", want: []string{"sh", "-c", `cat > /dev/null; echo "a b"`}},
		{in: `run "say \"hi\"" a\ b ''`, want: []string{"run", `say "hi"`, "a b", ""}},
		{in: "", want: nil},
		{in: "a 'b", wantErr: "unterminated ' quote"},
		{in: `a "b`, wantErr: `unterminated " quote`},
		{in: `a b\`, wantErr: "trailing backslash"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := command.Split(tt.in)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFromSpec(t *testing.T) {
	env := map[string]string{"FORGE_PROVIDER_TIMEOUT": "45s", "FORGE_MODEL": "m1"}
	cfg, err := command.FromSpec("llm -m 'big model'", func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, command.Config{Program: "llm", Args: []string{"-m", "big model"}, Timeout: 45 * time.Second, Model: "m1"}, cfg)

	_, err = command.FromSpec("  ", func(string) string { return "" })
	assert.Equal(t, provider.Misconfigured, provider.KindOf(err))
	_, err = command.FromSpec("llm", func(k string) string { return map[string]string{"FORGE_PROVIDER_TIMEOUT": "soon"}[k] })
	assert.ErrorContains(t, err, `FORGE_PROVIDER_TIMEOUT="soon" is not a positive duration`)
}

func TestCommandWithoutModel(t *testing.T) {
	t.Setenv("FORGE_MODEL", "")
	p, err := command.New(command.Config{Program: os.Args[0], Args: []string{"-forge-helper", "answer"}})
	require.NoError(t, err)
	r := upperReq
	a, err := p.Generate(context.Background(), r)
	require.NoError(t, err)
	assert.Contains(t, a.Code, "attempt=2 model=\n", "no FORGE_MODEL invented for the program")
	assert.Equal(t, filepath.Base(os.Args[0]), a.Model)

	r.Model = "per-request"
	a, err = p.Generate(context.Background(), r)
	require.NoError(t, err)
	assert.Contains(t, a.Code, "model=per-request\n")
	assert.Equal(t, "per-request", a.Model)
}

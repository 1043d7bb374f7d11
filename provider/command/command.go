// Package command generates artifacts with an external program: the request goes to its stdin,
// the answer comes from its stdout. Any CLI that wraps a model (a local llama.cpp binary, an
// agent, a script that picks answers from files) becomes a provider with no Go code.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/artifactforge/forge/internal/tailbuf"
	"github.com/artifactforge/forge/provider/internal/gen"
)

// Name is the provider's name in specs, errors and events.
const Name = "command"

// The delimiters of the request on the program's stdin, each on its own line:
//
//	=== FORGE SYSTEM ===
//	<stable system rules>
//	=== FORGE PROMPT ===
//	<contract, signature, failing code and error for a repair>
//	=== FORGE END ===
const (
	SystemMarker = "=== FORGE SYSTEM ==="
	PromptMarker = "=== FORGE PROMPT ==="
	EndMarker    = "=== FORGE END ==="
)

// StderrTail is how much of the program's stderr a failure reports.
const StderrTail = 2048

// maxStdout bounds what is read from the program (an artifact is one source file).
const maxStdout = 8 << 20

// Config is a program and how to run it.
type Config struct {
	Program string
	Args    []string
	Timeout time.Duration // per run; gen.DefaultTimeout when 0
	Model   string        // passed as FORGE_MODEL and reported in answers (Program's base name when empty)
	Env     []string      // extra KEY=VALUE entries on top of this process's environment
}

// FromSpec builds a Config from the part of the spec after "command:" ("PROG ARGS", split like
// a shell would: quotes and backslashes, no expansion) and FORGE_PROVIDER_TIMEOUT / FORGE_MODEL.
func FromSpec(argline string, env func(string) string) (Config, error) {
	words, err := Split(argline)
	if err != nil {
		return Config{}, gen.Errorf(gen.Misconfigured, Name, "spec %q: %v", argline, err)
	}
	if len(words) == 0 {
		return Config{}, gen.Errorf(gen.Misconfigured, Name, "no program given: use --provider 'command:PROG ARGS'")
	}
	e := gen.Env(env)
	timeout, err := e.Duration(Name, gen.EnvTimeout, gen.DefaultTimeout)
	if err != nil {
		return Config{}, err
	}
	return Config{Program: words[0], Args: words[1:], Timeout: timeout, Model: e.Get(gen.EnvModel)}, nil
}

// Provider runs the program once per request. It is safe for concurrent use.
type Provider struct {
	cfg  Config
	path string
}

// New resolves the program on PATH.
func New(cfg Config) (*Provider, error) {
	path, err := exec.LookPath(cfg.Program)
	if err != nil {
		return nil, &gen.Error{Kind: gen.Misconfigured, Provider: Name, Message: fmt.Sprintf("program %q not found (use --provider 'command:PROG ARGS')", cfg.Program), Err: err}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = gen.DefaultTimeout
	}
	return &Provider{cfg: cfg, path: path}, nil
}

// Name reports "command".
func (p *Provider) Name() string { return Name }

// Input is exactly what the program reads on stdin for req.
func Input(req gen.Request) []byte {
	var b bytes.Buffer
	for _, part := range []struct{ marker, text string }{{SystemMarker, req.System}, {PromptMarker, req.Prompt}} {
		b.WriteString(part.marker + "\n")
		b.WriteString(part.text)
		if !strings.HasSuffix(part.text, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString(EndMarker + "\n")
	return b.Bytes()
}

// Generate runs the program with Input(req) on stdin and FORGE_REQUEST_KIND, FORGE_ROLE,
// FORGE_METHOD, FORGE_ATTEMPT (plus FORGE_MODEL and FORGE_MAX_TOKENS when the request or the
// configuration sets them) in its environment, and heals
// its stdout. A non-zero exit or a timeout is Unavailable with the tail of stderr.
func (p *Provider) Generate(ctx context.Context, req gen.Request) (gen.Answer, error) {
	if err := ctx.Err(); err != nil {
		return gen.Answer{}, gen.TransportError(Name, err)
	}
	model, _ := req.Resolve(p.cfg.Model, 0)
	runCtx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()

	cmd := exec.CommandContext(runCtx, p.path, p.cfg.Args...)
	cmd.Stdin = bytes.NewReader(Input(req))
	cmd.Env = append(os.Environ(), p.cfg.Env...)
	cmd.Env = append(cmd.Env,
		"FORGE_REQUEST_KIND="+string(req.Kind),
		"FORGE_ROLE="+req.Role,
		"FORGE_METHOD="+req.Method,
		"FORGE_ATTEMPT="+strconv.Itoa(req.Attempt),
	)
	if model != "" {
		cmd.Env = append(cmd.Env, "FORGE_MODEL="+model)
	}
	if req.MaxTokens > 0 {
		cmd.Env = append(cmd.Env, "FORGE_MAX_TOKENS="+strconv.Itoa(req.MaxTokens))
	}
	var stdout limitedBuffer
	stdout.max = maxStdout
	stderr := tailbuf.New(0, StderrTail)
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	killGroup(cmd)
	cmd.WaitDelay = 2 * time.Second // children that keep the pipes open cannot hang the call

	err := cmd.Run()
	ans := gen.Answer{Raw: stdout.String(), Model: model}
	if ans.Model == "" {
		ans.Model = filepath.Base(p.cfg.Program)
	}
	switch {
	case ctx.Err() != nil:
		return ans, &gen.Error{Kind: gen.Unavailable, Provider: Name, Message: p.describe("interrupted", stderr), Err: ctx.Err()}
	case runCtx.Err() != nil:
		return ans, &gen.Error{Kind: gen.Unavailable, Provider: Name, Message: p.describe(fmt.Sprintf("timed out after %s (FORGE_PROVIDER_TIMEOUT)", p.cfg.Timeout), stderr), Err: runCtx.Err()}
	case err != nil:
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return ans, &gen.Error{Kind: gen.Unavailable, Provider: Name, Message: p.describe(fmt.Sprintf("exited with status %d", exitErr.ExitCode()), stderr), Err: err}
		}
		return ans, &gen.Error{Kind: gen.Unavailable, Provider: Name, Message: p.describe("could not run", stderr), Err: err}
	case stdout.truncated:
		return ans, gen.Errorf(gen.BadAnswer, Name, "%s wrote more than %d bytes", p.cfg.Program, maxStdout)
	}
	code, herr := gen.Heal(ans.Raw)
	if herr != nil {
		return ans, &gen.Error{Kind: gen.BadAnswer, Provider: Name, Message: p.describe("answered without Go code", stderr), Err: herr}
	}
	ans.Code = code
	return ans, nil
}

func (p *Provider) describe(what string, stderr *tailbuf.Buffer) string {
	msg := p.cfg.Program + " " + what
	if tail := strings.TrimSpace(stderr.String()); tail != "" {
		msg += "; stderr: " + tail
	}
	return msg
}

// limitedBuffer stops storing after max bytes but keeps accepting writes so the program is not
// killed by a broken pipe before its exit status is known.
type limitedBuffer struct {
	bytes.Buffer
	max       int
	truncated bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.Len(); room < len(p) {
		l.truncated = true
		if room > 0 {
			l.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return l.Buffer.Write(p)
}

// Split breaks a command line into words like a POSIX shell does for quoting: single quotes
// keep everything, double quotes allow \" and \\, a backslash outside quotes escapes the next
// character. There is no variable or glob expansion.
func Split(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
		quote rune
		esc   bool
	)
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				esc = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			esc, in = true, true
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if esc {
		return nil, errors.New("trailing backslash")
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

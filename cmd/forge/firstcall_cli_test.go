package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verStore makes a store with issue 23's role ver (func Get() string) and a replay cassette
// that writes its code; nothing is generated yet.
func verStore(t *testing.T) (store, cassette string) {
	t.Helper()
	store = t.TempDir()
	cf := filepath.Join(t.TempDir(), "ver.json")
	require.NoError(t, os.WriteFile(cf, []byte(`{"role":"ver","purpose":"the version","methods":{"get":"func Get() string"}}`), 0o644))
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "-f", cf)...).code)
	line, err := json.Marshal(map[string]any{"role": "ver", "method": "get", "kind": "generate", "attempt": 1,
		"code": "package artifact\n\nfunc Get() string { return \"v1\" }\n"})
	require.NoError(t, err)
	cassette = filepath.Join(t.TempDir(), "ver.jsonl")
	require.NoError(t, os.WriteFile(cassette, append(line, '\n'), 0o644))
	return store, cassette
}

// Issue 23 item 1, through the binary: the first `forge call ver get` (no args) prints the value
// of the call that generated the code, in JSON and in plain mode.
func TestBinZeroArgFirstCallAnswers(t *testing.T) {
	store, cassette := verStore(t)
	r := bin(t, nil, nil, storeArgs(store, "--provider", "replay:"+cassette, "call", "ver", "get", "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	var o struct {
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Meta  struct {
			ProgramSource string `json:"program_source"`
		} `json:"meta"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &o), r.stdout)
	assert.True(t, o.OK)
	assert.Equal(t, "generated", o.Meta.ProgramSource)
	assert.JSONEq(t, `"v1"`, string(o.Value), r.stdout)

	store, cassette = verStore(t)
	r = bin(t, nil, nil, storeArgs(store, "--provider", "replay:"+cassette, "call", "ver", "get")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, `"v1"`, strings.TrimSpace(r.stdout))
}

// Issue 23 item 10: the spinner's time is the step's, redrawn while it runs (it stayed at [0s]:
// the bar's own timer counts from the bar, and a line wider than the terminal wraps so that every
// redraw starts a new line under the first one). The clock is the test's: nothing here depends on
// the machine's speed.
func TestSpinnerShowsTheStepsElapsedTime(t *testing.T) {
	var w syncBuffer
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var reads atomic.Int64
	p := &slowSteps{w: &w, terminal: true, after: 0, tick: time.Millisecond, width: 60,
		now: func() time.Time {
			if reads.Add(1) == 1 {
				return start
			}
			return start.Add(5 * time.Second)
		}}
	done := p.step("waiting for the model (replay) to write units.c_to_f (generate, attempt 1 of 3) and a long tail that does not fit")
	deadline := time.Now().Add(time.Minute) // a hang bound
	for !strings.Contains(w.String(), "[5s]") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	done()
	out := w.String()
	assert.Contains(t, out, "[5s]", "the elapsed time moves while the step runs")
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r", "\n"), "\n") {
		if strings.Contains(line, "[5s]") {
			assert.LessOrEqual(t, utf8.RuneCountInString(line), 60, "a spinner line fits the terminal: %q", line)
		}
	}
}

func TestSpinnerTextFitsTheTerminal(t *testing.T) {
	p := &slowSteps{width: 40}
	s := p.spinnerText(strings.Repeat("x", 100), 3*time.Second)
	assert.True(t, strings.HasSuffix(s, " [3s]"), s)
	assert.LessOrEqual(t, utf8.RuneCountInString(s), 36, s)
	assert.Equal(t, "short [1m2s]", (&slowSteps{}).spinnerText("short", 62*time.Second+400*time.Millisecond))
}

// With -v, a generation says that an answer failed verification and the model is asked again,
// and how it ended; without -v (not a terminal) and under --json nothing of it is shown.
func TestBinVerboseSaysAGateFailureIsAskedAgain(t *testing.T) {
	store := t.TempDir()
	cf := filepath.Join(t.TempDir(), "units.json")
	require.NoError(t, os.WriteFile(cf, []byte(`{"role":"units","purpose":"unit conversion","methods":{"c_to_f":"func CToF(c float64) float64"},
"acceptance":{"examples":[{"method":"c_to_f","args":{"c":100},"expect":212}]}}`), 0o644))
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "-f", cf)...).code)
	var b strings.Builder
	for i, code := range []string{"package artifact\n\nfunc CToF(c float64) float64 { return c }\n", cToFCode} {
		line, err := json.Marshal(map[string]any{"role": "units", "method": "c_to_f", "kind": "generate", "attempt": i + 1, "code": code})
		require.NoError(t, err)
		b.Write(append(line, '\n'))
	}
	cassette := filepath.Join(t.TempDir(), "units.jsonl")
	require.NoError(t, os.WriteFile(cassette, []byte(b.String()), 0o644))

	for _, mode := range []string{"-v", "quiet", "--json"} {
		s := t.TempDir()
		require.NoError(t, os.CopyFS(s, os.DirFS(store)))
		args := []string{"--provider", "replay:" + cassette, "call", "units", "c_to_f", "c=1"}
		if mode != "quiet" {
			args = append([]string{mode}, args...)
		}
		r := bin(t, nil, nil, storeArgs(s, args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		if mode == "-v" {
			assert.Contains(t, r.stderr, "forge: answer 1 of the model was not usable")
			assert.Contains(t, r.stderr, "acceptance example 1")
			assert.Contains(t, r.stderr, "asking the model again (attempt 2 of")
			assert.Contains(t, r.stderr, "units.c_to_f generation 1 is verified and current")
		} else {
			assert.NotContains(t, r.stderr, "asking the model again", mode)
		}
	}
}

package replay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/replay"
)

var _ provider.Provider = (*replay.Cassette)(nil)

func req(role, method string, kind provider.Kind, attempt int) provider.Request {
	return provider.Request{Role: role, Method: method, Kind: kind, Attempt: attempt}
}

func TestCassetteServesAttemptsInOrder(t *testing.T) {
	c, err := replay.Open("testdata/text.jsonl")
	require.NoError(t, err)
	assert.Equal(t, 4, c.Len())
	ctx := context.Background()

	a, err := c.Generate(ctx, req("text", "upper", provider.Generate, 0))
	require.NoError(t, err)
	assert.Contains(t, a.Code, "strings.ToLower")
	assert.Equal(t, a.Code, a.Raw)
	assert.Equal(t, "replay", a.Model)
	assert.Equal(t, provider.Usage{InputTokens: 812, OutputTokens: 40}, a.Usage)

	// A raw answer is healed like a live one: fence removed, package main renamed.
	a, err = c.Generate(ctx, req("text", "upper", provider.Repair, 0))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(a.Code, "package artifact\n"), a.Code)
	assert.Contains(t, a.Code, "strings.ToUpper")
	assert.Contains(t, a.Raw, "The bug")
	assert.Equal(t, "recorded-model", a.Model)

	// The second generate request for lower gets attempt 2, after the simulated 429.
	_, err = c.Generate(ctx, req("text", "lower", provider.Generate, 0))
	var pe *provider.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, provider.RateLimited, pe.Kind)
	assert.Equal(t, 1500*time.Millisecond, pe.RetryAfter)
	assert.True(t, pe.Retriable())
	assert.Contains(t, err.Error(), "testdata/text.jsonl:5")

	a, err = c.Generate(ctx, req("text", "lower", provider.Generate, 0))
	require.NoError(t, err)
	assert.Contains(t, a.Code, "func Lower")

	// Past the recorded answers: a clear error naming the key and the cassette.
	_, err = c.Generate(ctx, req("text", "upper", provider.Generate, 0))
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, provider.Misconfigured, pe.Kind)
	assert.Contains(t, err.Error(), "no cassette answer for text.upper generate attempt 2 (call attempt 0, question ")
	assert.Contains(t, err.Error(), "in testdata/text.jsonl")

	// Reset replays from the start.
	c.Reset()
	a, err = c.Generate(ctx, req("text", "upper", provider.Generate, 0))
	require.NoError(t, err)
	assert.Contains(t, a.Code, "strings.ToLower")
}

// The call's attempt number never picks an ordered line: every call has an attempt 1.
func TestCassetteIgnoresTheCallsAttempt(t *testing.T) {
	c, err := replay.Open("testdata/text.jsonl")
	require.NoError(t, err)
	ctx := context.Background()

	_, err = c.Generate(ctx, req("text", "lower", provider.Generate, 2))
	assert.Equal(t, provider.RateLimited, provider.KindOf(err), "the first lower request gets line attempt 1")
	a, err := c.Generate(ctx, req("text", "lower", provider.Generate, 1))
	require.NoError(t, err)
	assert.Contains(t, a.Code, "func Lower")

	_, err = c.Generate(ctx, req("text", "lower", provider.Repair, 1))
	assert.ErrorContains(t, err, "no cassette answer for text.lower repair attempt 1 (call attempt 1, question ")
}

// Issue 9 item 5: a question line answers its question in any process and any order.
func TestCassetteAnswersByQuestion(t *testing.T) {
	first := provider.Request{Role: "text", Method: "upper", Kind: provider.Repair, Attempt: 1, Prompt: "fix this code: A"}
	second := provider.Request{Role: "text", Method: "upper", Kind: provider.Repair, Attempt: 1, Prompt: "fix this code: B"}
	data := fmt.Sprintf(`{"role":"text","method":"upper","kind":"repair","attempt":1,"question":%q,"code":"package artifact\n\nconst A = 1\n"}
{"role":"text","method":"upper","kind":"repair","attempt":1,"question":%q,"code":"package artifact\n\nconst B = 1\n"}
{"role":"text","method":"upper","kind":"repair","attempt":1,"code":"package artifact\n\nconst Ordered = 1\n"}
`, replay.QuestionOf(first), replay.QuestionOf(second))
	// Two processes see the questions in opposite orders and get the same answers.
	for _, order := range [][]provider.Request{{first, second}, {second, first}} {
		c, err := replay.New("inline", []byte(data))
		require.NoError(t, err)
		for _, r := range order {
			a, err := c.Generate(context.Background(), r)
			require.NoError(t, err)
			want := "const A"
			if r.Prompt == second.Prompt {
				want = "const B"
			}
			assert.Contains(t, a.Code, want)
		}
		// A question no line names is answered in order.
		other := first
		other.Prompt = "something else"
		a, err := c.Generate(context.Background(), other)
		require.NoError(t, err)
		assert.Contains(t, a.Code, "const Ordered")
		_, err = c.Generate(context.Background(), other)
		assert.ErrorContains(t, err, `"question":"`+replay.QuestionOf(other)+`"`)
	}
	assert.NotEqual(t, replay.QuestionOf(first), replay.QuestionOf(second))
	_, err := replay.New("dup", []byte(data+strings.SplitN(data, "\n", 2)[0]+"\n"))
	assert.ErrorContains(t, err, "duplicate answer for text.upper repair question")
}

func TestCassetteConcurrentRequestsGetDistinctAttempts(t *testing.T) {
	const n = 64
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"role":"r","method":"m","kind":"generate","attempt":%d,"code":"package artifact\n\nconst N = %d\n"}`+"\n", i, i)
	}
	c, err := replay.New("inline", []byte(b.String()))
	require.NoError(t, err)

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := c.Generate(context.Background(), req("r", "m", provider.Generate, 0))
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			seen[a.Code] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	assert.Len(t, seen, n, "every attempt served exactly once")
	_, err = c.Generate(context.Background(), req("r", "m", provider.Generate, 0))
	assert.ErrorContains(t, err, "attempt 65")
}

func TestCassetteMalformedLines(t *testing.T) {
	ok := `{"role":"r","method":"m","kind":"generate","attempt":1,"code":"package artifact"}`
	tests := []struct {
		name, data, want string
	}{
		{"not json", ok + "\n{oops", "inline:2: not a JSON answer object"},
		{"unknown field", `{"role":"r","method":"m","kind":"generate","attempt":1,"cod":"x"}`, `inline:1: not a JSON answer object: json: unknown field "cod"`},
		{"missing role", `{"method":"m","kind":"generate","attempt":1,"code":"x"}`, `inline:1: "role" and "method" are required`},
		{"bad kind", `{"role":"r","method":"m","kind":"fix","attempt":1,"code":"x"}`, `inline:1: "kind" must be "generate" or "repair", not "fix"`},
		{"zero attempt", `{"role":"r","method":"m","kind":"repair","code":"x"}`, `inline:1: "attempt" must be 1 or more, not 0`},
		{"bad error kind", `{"role":"r","method":"m","kind":"repair","attempt":1,"error":"down"}`, `inline:1: "error" must be one of`},
		{"no answer", `{"role":"r","method":"m","kind":"repair","attempt":1}`, `inline:1: exactly one of "code", "raw" or "error" is required`},
		{"two answers", `{"role":"r","method":"m","kind":"repair","attempt":1,"code":"x","error":"auth"}`, `inline:1: exactly one of`},
		{"two values", ok + ` {}`, `inline:1: more than one JSON value`},
		{"duplicate", "# header\n" + ok + "\n\n" + ok, "inline:4: duplicate answer for r.m generate attempt 1 (first on line 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := replay.New("inline", []byte(tt.data))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, provider.Misconfigured, provider.KindOf(err))
		})
	}
}

func TestCassetteRawWithoutCodeIsBadAnswer(t *testing.T) {
	c, err := replay.New("inline", []byte(`{"role":"r","method":"m","kind":"generate","attempt":1,"raw":"Sorry, I can't."}`))
	require.NoError(t, err)
	a, err := c.Generate(context.Background(), req("r", "m", provider.Generate, 1))
	assert.Equal(t, provider.BadAnswer, provider.KindOf(err))
	assert.ErrorIs(t, err, provider.ErrNoCode)
	assert.Equal(t, "Sorry, I can't.", a.Raw, "the raw answer comes back for feedback")
}

func TestCassetteMissingFile(t *testing.T) {
	_, err := replay.Open("testdata/nope.jsonl")
	assert.Equal(t, provider.Misconfigured, provider.KindOf(err))
	assert.ErrorContains(t, err, "nope.jsonl")
}

func TestCassetteCancelledContext(t *testing.T) {
	c, err := replay.Open("testdata/text.jsonl")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Generate(ctx, req("text", "upper", provider.Generate, 1))
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Equal(t, provider.Unavailable, provider.KindOf(err))
}

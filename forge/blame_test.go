package forge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/registry"
)

const (
	// upperBoom answers "boom" with a 16 MiB string, past the role's limits; upperBoomBang does, and panics on
	// "bang".
	upperBoom     = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\tif s == \"boom\" {\n\t\treturn strings.Repeat(\"x\", 16<<20)\n\t}\n\treturn strings.ToUpper(s)\n}\n"
	upperBoomBang = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\tif s == \"boom\" {\n\t\treturn strings.Repeat(\"x\", 16<<20)\n\t}\n\tif s == \"bang\" {\n\t\tpanic(s)\n\t}\n\treturn strings.ToUpper(s)\n}\n"
)

// Blame (safe regeneration): an input on which the previous generation passes a limit too (here
// a 16 MiB answer), while every input of the sample passes on the current one, is the input's: its
// failures neither count toward the code's health nor spend repairs, however often a caller sends
// it. An input only the current generation fails on stays the code's; so does a panic both
// generations have (TestPanicThePreviousGenerationHadIsRepaired).
func TestInputThePreviousGenerationFailsOnIsBlamed(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperBoom},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperBoomBang})
	f := openForge(t, t.TempDir(), p, sampleEvery, func(o *Options) { o.Switches.RepairOff = true })
	require.NoError(t, f.AddRole(textContract()))
	callAll(t, f, "first", "abc")
	require.True(t, f.Regenerate(context.Background(), "text", "upper").OK)
	callAll(t, f, "xyz", "hello")
	calls := p.n.Load()

	for i := 0; i < 4; i++ {
		o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"boom"}`))
		require.False(t, o.OK)
		assert.Equal(t, string(classifier.Caller), o.Err.Class, "try %d: %s", i, o.Err.Message)
		if i == 0 {
			assert.Equal(t, string(classifier.RuleInputPreviousFails), o.Err.Rule)
			assert.Contains(t, o.Err.Message, "generation 1 of text.upper fails on these args too")
		}
	}
	f.Flush()
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, 2, art.Generation)
	assert.NotEqual(t, registry.Degraded, art.Lifecycle)
	assert.Zero(t, art.IntrinsicFailureCount, "no failure on the blamed input counted")
	assert.Equal(t, calls, p.n.Load(), "no repair was asked for")
	var rules []string
	for _, e := range eventsOf(t, f) {
		if e.FailureRule != "" {
			rules = append(rules, e.FailureRule)
		}
	}
	assert.Contains(t, rules, string(classifier.RuleInputPreviousFails), "the event records whose failure it was")

	// Only the current generation fails on "bang": the code's, which asks for new code.
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"bang"}`))
	require.False(t, o.OK)
	assert.Greater(t, p.n.Load(), calls, "the code's failure asks the provider for new code")
}

func TestSamplePasses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sample []registry.SampleEntry
		want   bool
	}{
		{"no sample: no evidence", nil, false},
		{"every input got a value", []registry.SampleEntry{{Gen: 2, Value: json.RawMessage(`1`)}, {Gen: 2, Value: json.RawMessage(`2`)}}, true},
		{"an input failed", []registry.SampleEntry{{Gen: 2, Value: json.RawMessage(`1`)}, {Gen: 2, Err: "panic"}}, false},
		{"only another generation's inputs", []registry.SampleEntry{{Gen: 1, Value: json.RawMessage(`1`)}}, false},
		{"another generation's failure does not count", []registry.SampleEntry{{Gen: 1, Err: "panic"}, {Gen: 2, Value: json.RawMessage(`1`)}}, true},
	} {
		assert.Equal(t, tc.want, samplePasses(&registry.Artifact{Generation: 2, Sample: tc.sample}), tc.name)
	}
}

// A bug both generations have (a panic on an input the signature accepts) is no evidence about
// the input: it asks for a repair, which may fix what the last one left (the HumanEval scenario's
// sum_to_n, whose repairs each fix the next larger input).
func TestPanicThePreviousGenerationHadIsRepaired(t *testing.T) {
	panicsOnBang := "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\tif s == \"bang\" {\n\t\tpanic(s)\n\t}\n\treturn strings.ToUpper(s)\n}\n"
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: panicsOnBang},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperBoomBang},
		line{Role: "text", Method: "upper", Kind: "repair", Attempt: 1, Code: upperOK})
	f := openForge(t, t.TempDir(), p, sampleEvery)
	require.NoError(t, f.AddRole(textContract()))
	callAll(t, f, "first", "abc")
	require.True(t, f.Regenerate(context.Background(), "text", "upper").OK)
	callAll(t, f, "xyz", "hello")
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"bang"}`))
	require.True(t, o.OK, "the panic is repaired: %+v", o.Err)
	assert.JSONEq(t, `"BANG"`, string(o.Value))
	assert.Equal(t, SourceRepaired, o.Meta.ProgramSource)
}

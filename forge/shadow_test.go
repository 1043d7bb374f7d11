package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// upperExceptB is right on the acceptance example ("go") and wrong on every input with a "b".
const upperExceptB = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\tif strings.Contains(s, \"b\") {\n\t\treturn s\n\t}\n\treturn strings.ToUpper(s)\n}\n"

func sampleEvery(o *Options) { o.SampleEvery = 1 }

// callAll calls text.upper with each input and merges the sample.
func callAll(t *testing.T, f *Forge, inputs ...string) {
	t.Helper()
	for _, s := range inputs {
		o := f.Call(context.Background(), "text", "upper", json.RawMessage(fmt.Sprintf(`{"s":%q}`, s)))
		require.True(t, o.OK, "%+v", o.Err)
	}
	f.FlushSample()
}

// regenForge is a forge with role text whose text.upper is first written as first, then, by a
// regeneration, as then; every call offers its input to the sample.
func regenForge(t *testing.T, first, then string) *Forge {
	t.Helper()
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: first},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: then})
	f := openForge(t, t.TempDir(), p, sampleEvery, func(o *Options) { o.MaxProviderCalls = 1 })
	require.NoError(t, f.AddRole(textContract()))
	return f
}

func eventsOf(t *testing.T, f *Forge) []Event {
	t.Helper()
	f.Flush()
	evs, err := ReadEvents(f.Store().LocalDir())
	require.NoError(t, err)
	return evs
}

func TestWarmCallsFillTheSample(t *testing.T) {
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, t.TempDir(), p, sampleEvery)
	require.NoError(t, f.AddRole(textContract()))
	callAll(t, f, "first", "abc", "abc", "xyz")
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	require.Len(t, art.Sample, 2, "distinct inputs of the warm calls")
	assert.JSONEq(t, `{"s":"abc"}`, string(art.Sample[0].Args))
	assert.JSONEq(t, `"ABC"`, string(art.Sample[0].Value))
	assert.Equal(t, 1, art.Sample[0].Gen)

	// A caller error (args that do not fit) is never kept.
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":5}`))
	require.False(t, o.OK)
	f.FlushSample()
	art, _ = f.Store().Load("text", "upper")
	assert.Len(t, art.Sample, 2)
}

func TestSampleOffForSensitiveRoles(t *testing.T) {
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, t.TempDir(), p, sampleEvery)
	c := textContract()
	c.Sample = &registry.SampleConfig{Off: true}
	require.NoError(t, f.AddRole(c))
	callAll(t, f, "first", "secret", "other")
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Empty(t, art.Sample)
}

// The done-when scenario: a regeneration right on the acceptance examples but wrong on earlier
// real inputs is refused for a blessed artifact, with the inputs and both answers; accepting the
// changes promotes it, and the replay is in the history and the events.
func TestRegenerationOfBlessedArtifactChangingAnswersIsRefused(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperExceptB},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 3, Code: upperExceptB})
	f := openForge(t, t.TempDir(), p, sampleEvery, func(o *Options) { o.MaxProviderCalls = 1 })
	require.NoError(t, f.AddRole(textContract()))
	callAll(t, f, "first", "abc", "hello", "xyz")
	require.NoError(t, f.Bless("text", "upper", false))

	o := f.Regenerate(context.Background(), "text", "upper")
	require.False(t, o.OK, "a changed answer of a blessed artifact blocks the promotion")
	assert.Contains(t, o.Err.Message, `args {"s":"abc"}: was "ABC", now "abc"`)
	assert.Contains(t, o.Err.Message, "--accept-changes")
	require.NotNil(t, o.Meta.Replay)
	assert.Equal(t, 3, o.Meta.Replay.Replayed)
	assert.Equal(t, 1, o.Meta.Replay.Changed)
	art, _ := f.Store().Load("text", "upper")
	assert.Equal(t, 1, art.Generation, "nothing was promoted")
	assert.Equal(t, registry.Blessed, art.Lifecycle)

	o = f.RegenerateWith(context.Background(), "text", "upper", RegenOptions{AcceptChanges: true})
	require.True(t, o.OK, "%+v", o.Err)
	art, _ = f.Store().Load("text", "upper")
	assert.Equal(t, 2, art.Generation)
	require.NotNil(t, art.History[0].Replay)
	assert.Equal(t, registry.ReplaySummary{Replayed: 3, Same: 2, Changed: 1, Accepted: true}, *art.History[0].Replay)
	require.Len(t, art.Sample, 3, "the new generation's sample holds its own answers")
	for _, e := range art.Sample {
		assert.Equal(t, 2, e.Gen)
	}
	var replays []string
	for _, e := range eventsOf(t, f) {
		if e.Replay != "" {
			replays = append(replays, e.Replay)
		}
	}
	assert.Equal(t, []string{
		"replayed 3 sampled input(s): 2 same, 1 changed; not promoted: the artifact is blessed and the new code changes 1 of 3 sampled answers",
		"replayed 3 sampled input(s): 2 same, 1 changed (accepted)"}, replays)
}

// A regeneration in the process that served the calls replays them at once: the inputs offered
// since the sample's last flush (every ~10 s) count as well as the flushed ones.
func TestRegenerationReplaysCallsNotYetFlushed(t *testing.T) {
	f := regenForge(t, upperOK, upperExceptB)
	for _, s := range []string{"first", "abc", "xyz"} {
		require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(fmt.Sprintf(`{"s":%q}`, s))).OK)
	}
	require.NoError(t, f.Bless("text", "upper", false)) // no FlushSample: the inputs are queued
	o := f.Regenerate(context.Background(), "text", "upper")
	require.False(t, o.OK, "the queued input abc changes its answer: a blessed artifact's regeneration is refused")
	require.NotNil(t, o.Meta.Replay)
	assert.Equal(t, 2, o.Meta.Replay.Replayed)
	d, err := f.Diff(context.Background(), "text", "upper", 0, 0)
	if err == nil { // one generation only: Diff refuses; the sample is what matters here
		assert.Empty(t, d.NoSample)
	}
}

// On an artifact that is not blessed, a change under the threshold is promoted and recorded; one
// over it is refused.
func TestRegenerationOfCandidateRecordsChangesUnderTheThreshold(t *testing.T) {
	inputs := []string{"first", "abc"}
	for i := 0; i < 10; i++ {
		inputs = append(inputs, fmt.Sprintf("x%d", i))
	}
	f := regenForge(t, upperOK, upperExceptB)
	callAll(t, f, inputs...) // 11 sampled inputs, 1 with a "b": 9% changed
	o := f.Regenerate(context.Background(), "text", "upper")
	require.True(t, o.OK, "%+v", o.Err)
	require.NotNil(t, o.Meta.Replay)
	assert.Equal(t, 1, o.Meta.Replay.Changed)
	require.Len(t, o.Meta.Replay.Diffs, 1)
	assert.Equal(t, ReplayChanged, o.Meta.Replay.Diffs[0].Kind)
	art, _ := f.Store().Load("text", "upper")
	assert.Equal(t, 2, art.Generation)
	assert.Equal(t, 1, art.History[0].Replay.Changed)

	// Over the threshold: two more inputs with a "b" (3 of 13 changed once regenerated again).
	p2 := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f2 := openForge(t, t.TempDir(), p2, sampleEvery, func(o *Options) { o.MaxProviderCalls = 1 })
	require.NoError(t, f2.AddRole(textContract()))
	callAll(t, f2, append(inputs, "bb", "bcd")...)
	p2.Provider = cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperExceptB}).Provider
	o = f2.Regenerate(context.Background(), "text", "upper")
	require.False(t, o.OK)
	assert.Contains(t, o.Err.Message, "changes 3 of 13 sampled answers, more than 10%")
	art, _ = f2.Store().Load("text", "upper")
	assert.Equal(t, 1, art.Generation)
}

// Sample poisoning: one client fills the sample with distinct inputs that buggy code answers
// wrongly; the regeneration that fixes them changes those answers, and no longer is blocked by that
// client alone. Another client's changed answers still count.
func TestOneClientCannotBlockARegeneration(t *testing.T) {
	f := regenForge(t, upperExceptB, upperOK)
	callAs := func(client string, inputs ...string) {
		ctx := WithClient(context.Background(), client)
		for _, s := range inputs {
			o := f.Call(ctx, "text", "upper", json.RawMessage(fmt.Sprintf(`{"s":%q}`, s)))
			require.True(t, o.OK, "%+v", o.Err)
		}
		f.FlushSample()
	}
	callAs("alice", "first", "hello", "world", "go", "x1", "x2", "x3", "x4", "x5", "x6")
	callAs("mallory", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8") // 8 of 17 answered wrongly (the first call generated: not sampled)
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	require.Len(t, art.Sample, 17)
	assert.Equal(t, "mallory", art.Sample[16].Client)

	o := f.Regenerate(context.Background(), "text", "upper")
	require.True(t, o.OK, "%+v", o.Err)
	require.NotNil(t, o.Meta.Replay)
	assert.Equal(t, 8, o.Meta.Replay.Changed, "the changes are reported")
	art, _ = f.Store().Load("text", "upper")
	assert.Equal(t, 2, art.Generation)
	assert.Equal(t, "mallory", art.Sample[16].Client, "the new generation's sample keeps who offered each input")

	// The same changes from two clients block.
	f = regenForge(t, upperExceptB, upperOK)
	callAs("alice", "first", "hello", "world", "go", "x1", "x2", "x3", "x4", "x5", "x6", "b9", "b10")
	callAs("mallory", "b1", "b2", "b3", "b4", "b5", "b6")
	o = f.Regenerate(context.Background(), "text", "upper")
	require.False(t, o.OK)
	assert.Contains(t, o.Err.Message, "changes 8 of 17 sampled answers, more than 10%")
}

// A repair whose first candidate changes sampled answers is asked again with them; the repair
// that keeps every sampled answer is promoted with the replay's count in the event.
func TestRepairKeepsSampledAnswers(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperPanics},
		line{Role: "text", Method: "upper", Kind: "repair", Attempt: 1, Code: upperExceptB},
		line{Role: "text", Method: "upper", Kind: "repair", Attempt: 2, Code: upperOK})
	f := openForge(t, t.TempDir(), p, sampleEvery)
	require.NoError(t, f.AddRole(textContract()))
	callAll(t, f, "first", "abc", "hello")

	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":""}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, SourceRepaired, o.Meta.ProgramSource)
	require.NotNil(t, o.Meta.Replay)
	// The failing input itself was sampled (the code's own failure) by the call that failed: it is
	// replayed too, and now answers (fixed).
	assert.Equal(t, registry.ReplaySummary{Replayed: 3, Same: 2, Fixed: 1}, o.Meta.Replay.ReplaySummary)
	art, _ := f.Store().Load("text", "upper")
	assert.Equal(t, upperOK, art.Code)
	var repl string
	for _, e := range eventsOf(t, f) {
		if e.Reason != "" && e.Replay != "" {
			repl = e.Replay
		}
	}
	assert.Equal(t, "replayed 3 sampled input(s): 2 same, 1 fixed", repl)
	assert.Equal(t, 2, o.Meta.ProviderCalls)
}

func TestClassifyReplay(t *testing.T) {
	j := func(s string) json.RawMessage { return json.RawMessage(s) }
	for _, tc := range []struct {
		name          string
		args, failing string
		was, wasErr   string
		now, nowErr   string
		want          ReplayKind
	}{
		{"same value", `1`, ``, `"A"`, "", ` "A" `, "", ReplaySame},
		{"error again", `1`, ``, ``, "boom", ``, "bang", ReplaySame},
		{"changed value", `1`, ``, `"A"`, "", `"B"`, "", ReplayChanged},
		{"value now error", `1`, ``, `"A"`, "", ``, "boom", ReplayChanged},
		{"error now value", `1`, ``, ``, "boom", `"A"`, "", ReplayNowSucceeds},
		{"failing input answers", `{"a":1}`, `{ "a": 1 }`, ``, "boom", `"A"`, "", ReplayFixed},
		{"failing input value changed", `1`, `1`, `"A"`, "", `"B"`, "", ReplayFixed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var failing json.RawMessage
			if tc.failing != "" {
				failing = j(tc.failing)
			}
			assert.Equal(t, tc.want, ClassifyReplay(j(tc.args), failing, j(tc.was), tc.wasErr, j(tc.now), tc.nowErr))
		})
	}
}

func TestShadowPolicy(t *testing.T) {
	for _, tc := range []struct {
		in    ShadowInput
		block string
	}{
		{ShadowInput{Replayed: 10}, ""},
		{ShadowInput{Blessed: true, Replayed: 10, Changed: 1}, "blessed"},
		{ShadowInput{Blessed: true, AcceptChanges: true, Replayed: 10, Changed: 10}, ""},
		{ShadowInput{Replayed: 10, Changed: 1}, ""},
		{ShadowInput{Replayed: 10, Changed: 2}, "more than 10%"},
		{ShadowInput{Replayed: 10, Changed: 2, MaxChangedPercent: 20}, ""},
		{ShadowInput{Replayed: 10, Changed: 3, MaxChangedPercent: 20}, "more than 20%"},
		{ShadowInput{Replayed: 10, Changed: 10, MaxChangedPercent: -1}, ""},
		{ShadowInput{Replayed: 10, Changed: 10, AcceptChanges: true}, ""},
		{ShadowInput{Blessed: true, ContractChanged: true, Replayed: 10, Changed: 10}, ""},
		{ShadowInput{ContractChanged: true, Replayed: 10, Changed: 10}, ""},
		// No single named client decides the threshold (sample poisoning).
		{ShadowInput{Replayed: 40, Changed: 30, ByClient: []ClientReplay{{"mallory", 30, 30}, {"alice", 10, 0}}}, ""},
		{ShadowInput{Replayed: 40, Changed: 30, ByClient: []ClientReplay{{"mallory", 30, 28}, {"alice", 10, 2}}}, "more than 10%"},
		{ShadowInput{Replayed: 40, Changed: 30, ByClient: []ClientReplay{{"mallory", 20, 15}, {"alice", 20, 15}}}, "more than 10%"},
		{ShadowInput{Replayed: 10, Changed: 10, ByClient: []ClientReplay{{"mallory", 10, 10}}}, ""},
		{ShadowInput{Replayed: 5, Changed: 2, ByClient: []ClientReplay{{"a", 1, 1}, {"b", 1, 1}}}, "more than 10%"},
		{ShadowInput{Replayed: 40, Changed: 30, ByClient: []ClientReplay{{"alice", 10, 0}}}, "more than 10%"}, // the changes are no named client's
		{ShadowInput{Blessed: true, Replayed: 10, Changed: 10, ByClient: []ClientReplay{{"mallory", 10, 10}}}, "blessed"},
		{ShadowInput{Replayed: 10, Changed: 10, MaxChangedPercent: -1, ByClient: []ClientReplay{{"m", 10, 10}}}, ""},
	} {
		t.Run(fmt.Sprintf("%+v", tc.in), func(t *testing.T) {
			block, why := ShadowPolicy(tc.in)
			assert.Equal(t, tc.block != "", block)
			if tc.block != "" {
				assert.True(t, strings.Contains(why, tc.block), why)
			}
		})
	}
}

// After the contract changed, the sample was answered under the old one: changed answers are
// reported and never block the code written for the new contract.
func TestStaleContractRepairIsNotBlockedByTheSample(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "repair", Attempt: 1, Code: upperExceptB},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperExceptB})
	f := openForge(t, t.TempDir(), p, sampleEvery)
	require.NoError(t, f.AddRole(textContract()))
	callAll(t, f, "first", "abc", "hello", "xyz")
	c := textContract()
	c.Purpose = "string utilities that leave words with a b alone"
	require.NoError(t, f.AddRole(c))
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"zzz"}`))
	require.True(t, o.OK, "%+v", o.Err)
	require.NotNil(t, o.Meta.Replay)
	assert.Equal(t, 1, o.Meta.Replay.Changed)
	art, _ := f.Store().Load("text", "upper")
	assert.Equal(t, 2, art.Generation)
}

// A flush of the sample of real calls rewrites the artifact's record, but watchers see no
// change (no `forge watch` line, SSE event or MCP list_changed): only a generation, lifecycle or
// readability change is one. (The store change itself is fed to the live layer directly, so that
// the test does not depend on how the file watcher batches changes.)
func TestSampleFlushIsNoLiveChange(t *testing.T) {
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, t.TempDir(), p, sampleEvery)
	require.NoError(t, f.AddRole(textContract()))
	callAll(t, f, "first")
	require.NoError(t, f.Watch())
	sub := f.Subscribe(Filter{ChangesOnly: true})
	defer sub.Close()
	k := registry.Key{Role: "text", Method: "upper"}
	drain := func() []LiveEvent {
		var evs []LiveEvent
		f.publishArtifact(f.hub(), k, time.Now())
		for {
			select {
			case e := <-sub.C:
				evs = append(evs, e)
			default:
				return evs
			}
		}
	}
	drain() // whatever the file watcher already delivered

	callAll(t, f, "abc", "hello") // the sample grows: the record is rewritten
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	require.Len(t, art.Sample, 2)
	assert.Empty(t, drain(), "a sample-only change is no live change")

	require.NoError(t, f.Bless("text", "upper", false))
	f.publishArtifact(f.hub(), k, time.Now()) // or the file watcher did: one of the two publishes it
	select {
	case e := <-sub.C:
		assert.Equal(t, string(registry.Blessed), e.Artifact.Lifecycle)
	case <-time.After(liveHang):
		t.Fatal("the bless was not published (a hang)")
	}
}

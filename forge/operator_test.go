package forge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// operatorLines returns the store's operator action lines, in order.
func operatorLines(t *testing.T, f *Forge) []Event {
	t.Helper()
	f.Flush()
	evs, err := ReadEvents(f.Store().LocalDir())
	require.NoError(t, err)
	var out []Event
	for i := range evs {
		if IsOperatorAction(&evs[i]) {
			out = append(out, evs[i])
		}
	}
	return out
}

// Every operator action writes one line with who, what, and the generation before and after;
// forge stats counts each of them.
func TestEveryOperatorActionWritesALine(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperOK + "// v2\n"})
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	ctx := WithClient(context.Background(), "cli:ann")
	require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)

	require.NoError(t, f.BlessContext(ctx, "text", "upper", true)) // gen 1
	require.True(t, f.Regenerate(ctx, "text", "upper").OK)         // 1 -> 2
	require.NoError(t, f.QuarantineContext(ctx, "text", "upper"))  // 2
	require.Error(t, f.BlessContext(ctx, "text", "upper", false))  // refused
	require.True(t, f.LiftQuarantine(ctx, "text", "upper").OK)     // 2
	_, err := f.RollbackContext(ctx, "text", "upper", 1)           // 2 -> 3
	require.NoError(t, err)
	require.NoError(t, f.MarkRegenerateContext(ctx, "text", "upper"))                  // 3
	require.True(t, f.Edit(ctx, "text", "upper", upperOK+"// edited\n").OK)            // 3 -> 4
	require.NoError(t, f.ArchiveContext(ctx, "text", "upper"))                         // 4
	require.NoError(t, f.Bless("text", "upper", false))                                // no client in the context
	require.ErrorIs(t, f.QuarantineContext(ctx, "text", "nope"), registry.ErrNotFound) // refused: no such artifact

	type want struct {
		action         string
		ok             bool
		before, after  int
		lcBefore, lcAf string
	}
	wants := []want{
		{OpBless, true, 1, 1, "candidate", "blessed"},
		{OpRegenerate, true, 1, 2, "blessed", "candidate"},
		{OpQuarantine, true, 2, 2, "candidate", "quarantined"},
		{OpBless, false, 2, 2, "quarantined", "quarantined"},
		{OpLift, true, 2, 2, "quarantined", "candidate"},
		{OpRollback, true, 2, 3, "candidate", "durable"},
		{OpRegenNextCall, true, 3, 3, "durable", "durable"},
		{OpEdit, true, 3, 4, "durable", "candidate"},
		{OpArchive, true, 4, 4, "candidate", "archived"},
		{OpBless, true, 4, 4, "archived", "blessed"},
		{OpQuarantine, false, 0, 0, "", ""},
	}
	got := operatorLines(t, f)
	require.Len(t, got, len(wants))
	for i, w := range wants {
		e := got[i]
		assert.Equal(t, w.action, e.Action, "line %d", i)
		assert.Equal(t, w.ok, e.OK, "line %d %s", i, e.Action)
		assert.Equal(t, w.before, e.ArtifactGenBefore, "line %d %s: generation before", i, e.Action)
		assert.Equal(t, w.after, e.ArtifactGen, "line %d %s: generation after", i, e.Action)
		assert.Equal(t, w.lcBefore, e.LifecycleBefore, "line %d %s: lifecycle before", i, e.Action)
		assert.Equal(t, w.lcAf, e.Lifecycle, "line %d %s: lifecycle after", i, e.Action)
		assert.Equal(t, "operator", e.Reason)
		assert.NotZero(t, e.CallID)
		assert.False(t, e.Time.IsZero())
		if i == 9 {
			assert.Equal(t, "library", e.Who, "no client named: the Go API")
		} else {
			assert.Equal(t, "cli:ann", e.Who, "line %d %s", i, e.Action)
		}
	}
	assert.Equal(t, "reset metrics", got[0].Detail)
	assert.Contains(t, got[3].Detail, "refused: ")
	assert.Equal(t, "refused", got[3].FailureType)
	assert.Equal(t, "not_found", got[10].FailureType)
	assert.Equal(t, "to gen-1", got[5].Detail)

	st, err := f.Stats(time.Time{})
	require.NoError(t, err)
	assert.Equal(t, int64(len(wants)), st.Overall.OperatorActions)
	assert.Equal(t, int64(3), st.Overall.OperatorActionsByAction[OpBless])
	assert.Equal(t, int64(1), st.Overall.Calls, "operator actions are not calls")
}

// Restoring and dismissing a quarantined file are operator actions too.
func TestQuarantineRestoreAndDismissWriteLines(t *testing.T) {
	store := t.TempDir()
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, store, p)
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	ctx := WithClient(context.Background(), "http:ops")

	damage := func() string {
		path := filepath.Join(store, "tools", "text", "upper.json")
		require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o644))
		_, err := f.Store().Load("text", "upper")
		require.Error(t, err)
		m, err := f.Maintainer()
		require.NoError(t, err)
		q, err := m.Quarantined()
		require.NoError(t, err)
		require.NotEmpty(t, q)
		return q[len(q)-1].ID
	}
	id := damage()
	_, err := f.DismissQuarantined(ctx, id)
	require.NoError(t, err)
	id2 := damage()
	_, err = f.RestoreQuarantined(ctx, id2) // bytes that are not an artifact: refused
	require.Error(t, err)
	_, err = f.DismissQuarantined(ctx, "no-such-entry")
	require.Error(t, err)

	got := operatorLines(t, f)
	require.Len(t, got, 3)
	assert.Equal(t, OpDismiss, got[0].Action)
	assert.True(t, got[0].OK)
	assert.Equal(t, "http:ops", got[0].Who)
	assert.Equal(t, "text", got[0].Role)
	assert.Equal(t, "upper", got[0].Method)
	assert.Contains(t, got[0].Detail, id)
	assert.Equal(t, OpRestore, got[1].Action)
	assert.False(t, got[1].OK)
	assert.Equal(t, "upper", got[1].Method)
	assert.Contains(t, got[1].Detail, "refused: ")
	assert.Equal(t, OpDismiss, got[2].Action)
	assert.False(t, got[2].OK)
}

// A mistaken quarantine of a first generation has a way back: the gate checks the code again and
// it becomes a candidate; code the gate refuses stays quarantined.
func TestLiftQuarantineOfFirstGeneration(t *testing.T) {
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	ctx := context.Background()
	require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.NoError(t, f.Quarantine("text", "upper"))
	_, err := f.Rollback("text", "upper", 0)
	require.ErrorIs(t, err, registry.ErrNoGeneration, "gen 1 has nothing to roll back to")

	o := f.LiftQuarantine(ctx, "text", "upper")
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, 1, o.Meta.ArtifactGen)
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, registry.Candidate, art.Lifecycle)
	assert.Equal(t, 1, art.Generation)
	o = f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"back"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"BACK"`, string(o.Value))
	assert.Zero(t, o.Meta.ProviderCalls)

	o = f.LiftQuarantine(ctx, "text", "upper")
	require.False(t, o.OK, "not quarantined: nothing to lift")
	assert.Contains(t, o.Err.Message, "nothing to lift")

	// The contract now wants another answer: the gate refuses the code, the quarantine stands.
	c := textContract()
	c.Acceptance.Examples[0].Expect = json.RawMessage(`"NO"`)
	require.NoError(t, f.AddRole(c))
	require.NoError(t, f.Quarantine("text", "upper"))
	o = f.LiftQuarantine(ctx, "text", "upper")
	require.False(t, o.OK)
	assert.Contains(t, o.Err.Message, "quarantine of text.upper stands")
	assert.Contains(t, o.Err.Message, "acceptance example")
	art, err = f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, registry.Quarantined, art.Lifecycle)
	assert.Equal(t, 1, art.Generation)
}

// An edit of a blessed artifact makes a candidate unless the operator keeps the lifecycle; the
// event line says which.
func TestEditKeepsOrAnnouncesTheLifecycle(t *testing.T) {
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	ctx := context.Background()
	require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.NoError(t, f.Bless("text", "upper", false))

	assert.Equal(t, registry.Blessed, EditLifecycle(registry.Blessed, EditOptions{KeepLifecycle: true}))
	assert.Equal(t, registry.Candidate, EditLifecycle(registry.Blessed, EditOptions{}))
	assert.Equal(t, registry.Candidate, EditLifecycle(registry.Quarantined, EditOptions{KeepLifecycle: true}))

	o := f.EditWith(ctx, "text", "upper", upperOK+"// kept\n", EditOptions{KeepLifecycle: true})
	require.True(t, o.OK, "%+v", o.Err)
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, 2, art.Generation)
	assert.Equal(t, registry.Blessed, art.Lifecycle)

	o = f.Edit(ctx, "text", "upper", upperOK+"// demoted\n")
	require.True(t, o.OK, "%+v", o.Err)
	art, err = f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, 3, art.Generation)
	assert.Equal(t, registry.Candidate, art.Lifecycle)

	got := operatorLines(t, f)
	require.Len(t, got, 3) // bless, edit, edit
	assert.Equal(t, "blessed -> blessed (keep lifecycle)", got[1].Detail)
	assert.Equal(t, "blessed", got[1].Lifecycle)
	assert.Equal(t, "blessed -> candidate", got[2].Detail)
	assert.Equal(t, 2, got[2].ArtifactGenBefore)
	assert.Equal(t, 3, got[2].ArtifactGen)
}

// A runtime-incompatible artifact regenerated to identical code records the runtime it was
// verified against now: later calls run it, with no provider call.
func TestUnchangedRegenerationRecordsRuntimeVersion(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 3, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 4, Code: upperOK})
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	ctx := context.Background()
	require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	_, err := f.Store().Update("text", "upper", func(a *registry.Artifact, _ bool) error {
		a.RuntimeVersion = "99.0.0" // written by a forge of another major runtime
		return nil
	})
	require.NoError(t, err)
	p.n.Store(0)
	for i := range 3 {
		o := f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`))
		require.True(t, o.OK, "call %d: %+v", i, o.Err)
	}
	assert.Equal(t, int64(1), p.n.Load(), "only the first call regenerates")
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, registry.RuntimeVersion, art.RuntimeVersion)
	assert.Equal(t, 1, art.Generation, "the same code adds no generation")
}

// An operator's regeneration of a quarantined artifact that writes the same code again did not
// do what it was asked: a refusal (the CLI exits 1, HTTP and MCP answer ok false), with the ways
// out, the lift among them; its event line says so.
func TestRegenerateOfQuarantinedSameCodeIsARefusal(t *testing.T) {
	p := cassette(t,
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperOK})
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	ctx := context.Background()
	require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.NoError(t, f.Quarantine("text", "upper"))
	o := f.Regenerate(ctx, "text", "upper")
	require.False(t, o.OK)
	assert.Equal(t, "refused", o.Err.Type)
	assert.True(t, o.Meta.Unchanged)
	assert.Contains(t, o.Err.Message, "still quarantined")
	assert.Contains(t, o.Err.Message, "forge quarantine lift text upper")
	got := operatorLines(t, f)
	require.Len(t, got, 2)
	assert.Equal(t, OpRegenerate, got[1].Action)
	assert.False(t, got[1].OK)
	assert.Equal(t, "quarantined", got[1].Lifecycle)
}

// Restoring a role's hand-edited contract says which artifacts the new contract made stale
// (Restored.Stale: forge decides, `forge quarantine restore` prints it).
func TestRestoreQuarantinedRoleNamesStale(t *testing.T) {
	store := t.TempDir()
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, store, p)
	require.NoError(t, f.AddRole(textContract()))
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)

	path := filepath.Join(store, "roles", "text.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	doc["purpose"] = "string utilities, edited by hand"
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))

	m, err := f.Maintainer()
	require.NoError(t, err)
	_, err = m.Doctor() // finds the hand edit: quarantined, the last-good contract restored
	require.NoError(t, err)
	q, err := m.Quarantined()
	require.NoError(t, err)
	require.Len(t, q, 1, "%+v", q)
	rr, err := f.RestoreQuarantined(WithClient(context.Background(), "cli:ops"), q[0].ID)
	require.NoError(t, err)
	assert.Equal(t, "accepted", rr.Action, rr.Detail)
	require.Len(t, rr.Stale, 1, "%+v", rr)
	assert.Equal(t, "upper", rr.Stale[0].Method)
}

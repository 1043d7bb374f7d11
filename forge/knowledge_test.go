package forge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/repair"
)

// clockContract is a role whose obvious code (time.Now) is refused by the sandbox.
func clockContract(role, method, purpose string) registry.Contract {
	return registry.Contract{Role: role, Purpose: purpose,
		Methods:      map[string]string{method: "func " + strings.ToUpper(method[:1]) + method[1:] + "() int"},
		Capabilities: &registry.Capabilities{Now: true}}
}

// pitfallModel answers with code that calls time.Now (refused by the sandbox) unless its prompt
// carries the lesson "use host.Now", in which case it answers correctly. It counts its calls.
type pitfallModel struct {
	mu      sync.Mutex
	calls   int
	prompts []string
}

func (m *pitfallModel) Generate(_ context.Context, req provider.Request) (provider.Answer, error) {
	m.mu.Lock()
	m.calls++
	m.prompts = append(m.prompts, req.Prompt)
	m.mu.Unlock()
	fn := "Year"
	if req.Method == "day" {
		fn = "Day"
	}
	code := "package artifact\n\nimport \"time\"\n\nfunc " + fn + "() int { return time.Now()." + fn + "() }\n"
	if strings.Contains(req.Prompt, "use host.Now") {
		code = "package artifact\n\nimport \"forge/host\"\n\nfunc " + fn + "() int { return host.Now()." + fn + "() }\n"
	}
	return provider.Answer{Code: code, Model: "pitfall"}, nil
}

func (*pitfallModel) Name() string { return "pitfall" }

// learningScenario runs role A (hits the pitfall, fixed by the gate's feedback) in one forge
// session, closes it, then role B in a new session on the same store, and returns the provider
// calls each role needed and B's prompts.
func learningScenario(t *testing.T, learning bool) (callsA, callsB int, promptsB []string, store string) {
	store = t.TempDir()
	off := func(o *Options) { o.NoLearning = !learning }

	mA := &pitfallModel{}
	fA := openForge(t, store, mA, off)
	require.NoError(t, fA.AddRole(clockContract("clock", "year", "the year of the current time")))
	o := fA.Call(context.Background(), "clock", "year", json.RawMessage(`{}`))
	require.True(t, o.OK, "%v", o.Err)
	require.NoError(t, fA.Close())

	mB := &pitfallModel{}
	fB := openForge(t, store, mB, off)
	require.NoError(t, fB.AddRole(clockContract("calendar", "day", "the day of the month of the current time")))
	o = fB.Call(context.Background(), "calendar", "day", json.RawMessage(`{}`))
	require.True(t, o.OK, "%v", o.Err)
	require.NoError(t, fB.Close())
	return mA.calls, mB.calls, mB.prompts, store
}

func TestLearningPays(t *testing.T) {
	aOn, bOn, promptsOn, store := learningScenario(t, true)
	aOff, bOff, _, storeOff := learningScenario(t, false)
	t.Logf("provider calls: learner on: role A %d, role B %d; learner off: role A %d, role B %d", aOn, bOn, aOff, bOff)
	assert.Equal(t, 2, aOn, "role A hits the pitfall and is fixed by feedback")
	assert.Equal(t, 2, aOff)
	assert.Equal(t, 1, bOn, "role B, in a later session, passes at the first attempt with the lesson")
	assert.Equal(t, 2, bOff, "without the learner role B hits the same pitfall")
	assert.Contains(t, promptsOn[0], "## Lessons from earlier generations")

	l, err := learner.Open(store, learner.Options{})
	require.NoError(t, err)
	forge, err := l.List(learner.ForgeDomain)
	require.NoError(t, err)
	require.Len(t, forge, 1, "one sandbox lesson in the shared forge domain")
	assert.Equal(t, learner.Correction, forge[0].Category)
	assert.Contains(t, forge[0].Content, "intrinsic/policy")
	assert.Contains(t, forge[0].Content, "time.Now")
	assert.InDelta(t, 0.2, forge[0].Confidence, 1e-9, "role B's first-attempt pass confirmed the lesson it used")
	own, _ := l.List("clock")
	assert.Len(t, own, 1, "the lesson is in the role's own domain too")

	_, err = os.Stat(filepath.Join(storeOff, learner.Dir, "forge.yaml"))
	assert.True(t, os.IsNotExist(err), "learning off writes no knowledge")
}

func TestDamagedKnowledgeIsQuarantinedByTheStore(t *testing.T) {
	store := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(store, learner.Dir), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(store, learner.Dir, "forge.yaml"), []byte("{not: [a list"), 0o644))
	m := &pitfallModel{}
	f := openForge(t, store, m)
	require.NoError(t, f.AddRole(clockContract("clock", "year", "the year of the current time")))
	o := f.Call(context.Background(), "clock", "year", json.RawMessage(`{}`))
	require.True(t, o.OK, "%v", o.Err)
	q, err := f.Store().(registry.Maintainer).Quarantined()
	require.NoError(t, err)
	require.Len(t, q, 1)
	assert.Contains(t, q[0].Path, filepath.Join(learner.Dir, "forge.yaml"))
	assert.Contains(t, q[0].Reason, "knowledge file does not parse")
	require.NoError(t, f.Close())
	l, _ := learner.Open(store, learner.Options{})
	es, _ := l.List(learner.ForgeDomain)
	assert.Len(t, es, 1, "the domain started again and learned the new lesson")
}

func TestLessonOf(t *testing.T) {
	for _, tc := range []struct {
		a    repair.Attempt
		want string
		ok   bool
	}{
		{repair.Attempt{Error: "sandbox: policy: line 5: time.Now is not available", Result: classifier.Result{Class: classifier.Intrinsic, Rule: classifier.RulePolicy}},
			"intrinsic/policy: sandbox: policy: time.Now is not available", true},
		{repair.Attempt{Error: "artifact.go:3:9: undefined: foo", Result: classifier.Result{Class: classifier.Intrinsic, Rule: classifier.RuleCompile}},
			"intrinsic/compile: undefined: foo", true},
		{repair.Attempt{Error: "the contract changed", Result: classifier.Result{Class: classifier.Intrinsic, Rule: classifier.RuleStaleContract}}, "", false},
		{repair.Attempt{Error: "upstream 503", Result: classifier.Result{Class: classifier.Extrinsic, Rule: classifier.RuleHostHTTP5xx}}, "", false},
	} {
		got, ok := lessonOf(tc.a)
		assert.Equal(t, tc.ok, ok, tc.a.Error)
		assert.Equal(t, tc.want, got)
	}
}

package forge

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

func TestDefineDecision(t *testing.T) {
	mine := &registry.RoleRecord{Contract: registry.Contract{Role: "r"}, DefinedBy: "a"}
	ops := &registry.RoleRecord{Contract: registry.Contract{Role: "r"}}
	for _, tc := range []struct {
		name   string
		p      DefinePolicy
		prev   *registry.RoleRecord
		change string
		want   string   // "" allowed, else part of the refusal
		roles  []string // the roles the client may call; nil: every role
	}{
		{"off", DefinePolicy{}, nil, "new", "--allow-define-roles", nil},
		{"off with identities", DefinePolicy{Identities: true}, nil, "new", "define_roles: true", nil},
		{"new", DefinePolicy{Allowed: true}, nil, "new", "", nil},
		{"own role changed", DefinePolicy{Allowed: true}, mine, "changed", "", nil},
		{"same contract again", DefinePolicy{Allowed: true}, ops, "unchanged", "", nil},
		{"another client's role", DefinePolicy{Allowed: true}, &registry.RoleRecord{Contract: registry.Contract{Role: "r"}, DefinedBy: "b"}, "changed", `defined by client "b"`, nil},
		{"the operator's role", DefinePolicy{Allowed: true}, ops, "changed", "defined by the operator", nil},
		{"redefine allowed", DefinePolicy{Allowed: true, Redefine: true}, ops, "changed", "", nil},
		// A client of some roles defines only those: another name could be a role another
		// client lists and the operator has not added yet, which it would then call as this
		// client wrote it.
		{"a role among the client's", DefinePolicy{Allowed: true}, nil, "new", "", []string{"q", "r"}},
		{"a client of every role", DefinePolicy{Allowed: true}, nil, "new", "", []string{"*"}},
		{"a role the client may not call", DefinePolicy{Allowed: true}, nil, "new", "may define only the roles it may call (q)", []string{"q"}},
		{"nor change it, redefine or not", DefinePolicy{Allowed: true, Redefine: true}, mine, "changed", "may define only the roles it may call (q)", []string{"q"}},
	} {
		err := defineDecision(tc.p, "a", tc.roles, "r", tc.prev, tc.change)
		if tc.want == "" {
			assert.NoError(t, err, tc.name)
			continue
		}
		require.Error(t, err, tc.name)
		assert.ErrorIs(t, err, ErrDefineRefused, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
}

// TestDefineRole: a definition is checked (every problem, nothing written), refused when policy
// says no (saying how to allow it), stored as the client's, and an event line with its name
// either way; another client may not change it, its definer may.
func TestDefineRole(t *testing.T) {
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, t.TempDir(), p)
	a := WithClient(context.Background(), "agent-a")
	contract := []byte(`{"role":"text","purpose":"string utilities","methods":{"upper":"func Upper(s string) string"}}`)

	_, err := f.DefineRole(a, contract, DefinePolicy{}, false)
	require.ErrorIs(t, err, ErrDefineRefused)
	assert.Contains(t, err.Error(), "--allow-define-roles")
	_, err = f.Store().Role("text")
	require.ErrorIs(t, err, registry.ErrNotFound, "nothing written")

	res, err := f.DefineRole(a, []byte(`{"role":"text","purpose":"","methods":{"upper":"func Up(s string) string"}}`), DefinePolicy{Allowed: true}, false)
	require.ErrorIs(t, err, registry.ErrInvalidContract)
	assert.Len(t, res.Problems, 2, "%v", res.Problems)

	res, err = f.DefineRole(a, contract, DefinePolicy{}, true)
	require.NoError(t, err, "a dry run checks only")
	assert.True(t, res.OK)
	assert.Equal(t, "new", res.Change)

	res, err = f.DefineRole(a, contract, DefinePolicy{Allowed: true}, false)
	require.NoError(t, err)
	assert.Equal(t, DefineResult{OK: true, Role: "text", Problems: []registry.Problem{}, Change: "new", Fingerprint: res.Fingerprint, DefinedBy: "agent-a", Tools: []string{"text__upper"}}, res)
	o := f.Call(a, "text", "upper", json.RawMessage(`{"s":"a"}`))
	require.True(t, o.OK, "callable at once: %+v", o.Err)

	changed := []byte(`{"role":"text","purpose":"string utilities, loud","methods":{"upper":"func Upper(s string) string"}}`)
	_, err = f.DefineRole(WithClient(context.Background(), "agent-b"), changed, DefinePolicy{Allowed: true}, false)
	require.ErrorIs(t, err, ErrDefineRefused)
	assert.Contains(t, err.Error(), `defined by client "agent-a"`)
	res, err = f.DefineRole(a, changed, DefinePolicy{Allowed: true}, false)
	require.NoError(t, err)
	assert.Equal(t, "changed", res.Change)
	require.Len(t, res.Stale, 1)
	assert.Equal(t, "upper", res.Stale[0].Method)
	assert.Contains(t, res.Stale[0].Why, "the contract changed since it was verified")

	var lines []Event
	for _, e := range operatorLines(t, f) {
		if e.Action == OpDefineRole {
			lines = append(lines, e)
		}
	}
	require.Len(t, lines, 4, "refused, new, refused, changed")
	for i, want := range []struct {
		who string
		ok  bool
	}{{"agent-a", false}, {"agent-a", true}, {"agent-b", false}, {"agent-a", true}} {
		assert.Equal(t, want.who, lines[i].Who, "line %d", i)
		assert.Equal(t, want.ok, lines[i].OK, "line %d", i)
		assert.Equal(t, "text", lines[i].Role)
	}
}

func TestDefineSwitches(t *testing.T) {
	for v, want := range map[string]DefineSwitches{"": {}, "0": {}, "1": {Allow: true}, "true": {Allow: true}, "all": {Allow: true, Redefine: true}} {
		got, err := DefineSwitchesFromEnv(func(string) string { return v })
		require.NoError(t, err, v)
		assert.Equal(t, want, got, v)
	}
	_, err := DefineSwitchesFromEnv(func(string) string { return "yes" })
	assert.ErrorContains(t, err, "use 1")

	on, all := DefineSwitches{Allow: true}, DefineSwitches{Allow: true, Redefine: true}
	for _, tc := range []struct {
		s        DefineSwitches
		identity *DefineSwitches
		want     DefinePolicy
	}{
		{DefineSwitches{}, nil, DefinePolicy{}},
		{on, nil, DefinePolicy{Allowed: true}},
		{all, nil, DefinePolicy{Allowed: true, Redefine: true}},
		{DefineSwitches{Redefine: true}, nil, DefinePolicy{}},
		{DefineSwitches{}, &all, DefinePolicy{Identities: true}},
		{on, &DefineSwitches{}, DefinePolicy{Identities: true}},
		{on, &on, DefinePolicy{Identities: true, Allowed: true}},
		{on, &all, DefinePolicy{Identities: true, Allowed: true, Redefine: true}},
		{all, &on, DefinePolicy{Identities: true, Allowed: true, Redefine: true}},
	} {
		assert.Equal(t, tc.want, tc.s.For(tc.identity), "%+v %+v", tc.s, tc.identity)
	}
}

// TestPutContract: the operator's definition (`forge role add`) is checked, stored as the
// client ctx names with no policy and not as an agent's, is an event line like every
// definition, and says which artifacts a change made stale.
func TestPutContract(t *testing.T) {
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	dir := t.TempDir()
	f := openForge(t, dir, p)
	ops := WithClient(context.Background(), "cli:ops")
	c := registry.Contract{Role: "text", Purpose: "string utilities", Methods: map[string]string{"upper": "func Upper(s string) string"}}

	_, _, err := f.PutContract(ops, registry.Contract{Role: "text"})
	require.ErrorIs(t, err, registry.ErrInvalidContract, "no purpose")
	rec, stale, err := f.PutContract(ops, c)
	require.NoError(t, err)
	assert.Equal(t, "cli:ops", rec.DefinedBy)
	assert.False(t, rec.AgentDefined)
	assert.Empty(t, stale)
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)

	c.Purpose = "string utilities, changed"
	_, stale, err = f.PutContract(ops, c)
	require.NoError(t, err)
	require.Len(t, stale, 1)
	assert.Equal(t, "upper", stale[0].Method)

	f.Flush()
	evs, err := ReadEvents(dir)
	require.NoError(t, err)
	var lines []string
	for _, e := range evs {
		if e.Action == OpDefineRole {
			lines = append(lines, e.Who+" "+strings.Fields(e.Detail)[0])
		}
	}
	assert.Equal(t, []string{"cli:ops new", "cli:ops changed"}, lines, "the refused contract wrote nothing, not even a line")
}

// TestDefineRoleListsOnlyPossibleTools: a refused contract whose role or method name is not a
// valid name listed tools no one could call ("../etc__a", "my role__a"), as if they had been
// made; it now lists only the names a tool could have.
func TestDefineRoleListsOnlyPossibleTools(t *testing.T) {
	f := openForge(t, t.TempDir(), nil)
	for contract, want := range map[string][]string{
		`{"role":"../etc","purpose":"p","methods":{"a":"func A() int"}}`:                          {},
		`{"role":"my role","purpose":"p","methods":{"a":"func A() int"}}`:                         {},
		`{"role":"ok","purpose":"p","methods":{"a":"func A() int","Bad Name":"func B() int"}}`:    {"ok__a"},
		`{"role":"ok","purpose":"p","methods":{"a":"func A() int","b":"func B() int"}}`:           {"ok__a", "ok__b"},
		`{"role":"wörds","purpose":"p","methods":{"a":"func A() int"},"capabilities":{"x":true}}`: {},
	} {
		res, _ := f.DefineRole(context.Background(), []byte(contract), DefinePolicy{Allowed: true}, true)
		assert.Equal(t, want, res.Tools, contract)
	}
}

// TestNoSuchToolEchoesANameBounded: a tool name a caller made up is repeated cut, with its length.
func TestNoSuchToolEchoesANameBounded(t *testing.T) {
	f := openForge(t, t.TempDir(), nil)
	msg := f.NoSuchTool(strings.Repeat("x", 100_000), nil)
	assert.Less(t, len(msg), 1_000, msg)
	assert.Contains(t, msg, "(100000 bytes)")
}

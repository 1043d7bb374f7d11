package forge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassifyAnswers(t *testing.T) {
	for _, tc := range []struct {
		name           string
		was, now       string
		wasErr, nowErr string
		want           ReplayKind
	}{
		{name: "equal values", was: `{"a":1,"b":2}`, now: `{"b":2,"a":1}`, want: ReplaySame},
		{name: "errors on both", wasErr: "x", nowErr: "y", want: ReplaySame},
		{name: "value differs", was: `"ABC"`, now: `"abc"`, want: ReplayChanged},
		{name: "error now a value", wasErr: "boom", now: `1`, want: ReplayNowSucceeds},
		{name: "value now an error", was: `1`, nowErr: "boom", want: ReplayNowFails},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ClassifyAnswers(json.RawMessage(tc.was), tc.wasErr, json.RawMessage(tc.now), tc.nowErr))
		})
	}
}

func TestDiffGenerations(t *testing.T) {
	for _, tc := range []struct {
		cur, from, to    int
		wantFrom, wantTo int
		err              string
	}{
		{cur: 3, wantFrom: 2, wantTo: 3},
		{cur: 3, from: 1, wantFrom: 1, wantTo: 3},
		{cur: 3, from: 1, to: 2, wantFrom: 1, wantTo: 2},
		{cur: 3, to: 2, wantFrom: 1, wantTo: 2},
		{cur: 1, err: "gen-1 has no generation before it"},
		{cur: 3, from: 2, to: 2, err: "compared with itself"},
		{cur: 3, from: -1, to: 3, err: "a generation number is 1 or more"},
		{cur: 3, from: 1, to: -2, err: "a generation number is 1 or more"},
	} {
		from, to, err := DiffGenerations(tc.cur, tc.from, tc.to)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%+v", tc)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, [2]int{tc.wantFrom, tc.wantTo}, [2]int{from, to}, "%+v", tc)
	}
}

func TestUnifiedDiff(t *testing.T) {
	assert.Empty(t, UnifiedDiff("a", "b", "x\ny\n", "x\ny\n"))
	assert.Equal(t, "--- gen-1\n+++ gen-2\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", UnifiedDiff("gen-1", "gen-2", "a\nb\nc\n", "a\nB\nc\n"))
	// Two changes far apart are two hunks, each with 3 lines of context.
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	b := "1x\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n"
	assert.Equal(t, "--- a\n+++ b\n@@ -1,4 +1,4 @@\n-1\n+1x\n 2\n 3\n 4\n@@ -10,3 +10,4 @@\n 10\n 11\n 12\n+13\n", UnifiedDiff("a", "b", a, b))
	// From nothing.
	assert.Equal(t, "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n", UnifiedDiff("a", "b", "", "x\n"))
}

// The done-when scenario of `forge diff`: a scripted model's regeneration, right on the
// acceptance examples and wrong on an earlier real input, promoted with accepted changes; the
// diff of the previous and the current generation shows both the code and that input's two
// answers.
func TestDiffShowsCodeAndBehaviour(t *testing.T) {
	f := gen2Accepted(t)
	d, err := f.Diff(context.Background(), "text", "upper", 0, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, d.From)
	assert.Equal(t, 2, d.To)
	assert.Contains(t, d.Code, "--- gen-1\n+++ gen-2\n")
	assert.Contains(t, d.Code, "+\tif strings.Contains(s, \"b\") {\n")
	assert.Equal(t, 2, d.Sampled, "the sample the current generation keeps")
	assert.Equal(t, 1, d.Same)
	assert.Equal(t, 1, d.Changed)
	require.Len(t, d.Diffs, 1)
	assert.Equal(t, `args {"s":"abc"}: was "ABC", now "abc"`, d.Diffs[0].String())
	assert.True(t, d.Differs())

	// The other way round, named explicitly.
	d, err = f.Diff(context.Background(), "text", "upper", 2, 1)
	require.NoError(t, err)
	assert.Equal(t, `args {"s":"abc"}: was "abc", now "ABC"`, d.Diffs[0].String())

	_, err = f.Diff(context.Background(), "text", "upper", 7, 0)
	assert.ErrorContains(t, err, "keeps no generation 7 (it keeps gen-2, gen-1)")
}

// gen2Accepted leaves text.upper at gen-2 (upperExceptB, from a scripted model, its changes
// accepted) with a sample of gen-2's answers ("abc" answers "abc"); gen-1 (upperOK) is kept.
func gen2Accepted(t *testing.T) *Forge {
	t.Helper()
	f := regenForge(t, upperOK, upperExceptB)
	callAll(t, f, "first", "abc", "hello")
	_, err := f.Diff(context.Background(), "text", "upper", 0, 0)
	require.ErrorContains(t, err, "gen-1 has no generation before it")
	o := f.RegenerateWith(context.Background(), "text", "upper", RegenOptions{AcceptChanges: true})
	require.True(t, o.OK, "%+v", o.Err)
	return f
}

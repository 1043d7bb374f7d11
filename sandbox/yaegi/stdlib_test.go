package yaegi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

func TestGenericCode(t *testing.T) {
	pkgOf := func(src string) string { return strings.TrimPrefix(strings.SplitN(src, "\n", 2)[0], "package ") }
	hasFunc := func(srcs []string, name string) bool {
		for _, s := range srcs {
			if strings.Contains(s, "\nfunc "+name+"[") || strings.Contains(s, "\nfunc "+name+"(") {
				return true
			}
		}
		return false
	}
	assert.Nil(t, genericCode("package main\n\nimport \"strings\"\n\nfunc F() string { return strings.ToUpper(\"x\") }\n"))

	// slices.Contains needs Index, nothing of cmp.
	got := genericCode("package main\n\nimport \"slices\"\n\nfunc F(xs []int) bool { return slices.Contains(xs, 1) }\n")
	require.Len(t, got, 1)
	assert.Equal(t, "slices", pkgOf(got[0]))
	assert.True(t, hasFunc(got, "Contains") && hasFunc(got, "Index"))
	assert.False(t, hasFunc(got, "Insert") || hasFunc(got, "Compare"), got[0])
	assert.NotContains(t, got[0], "import")

	// slices.Compare uses cmp.Compare: cmp comes first, pruned too; renamed imports count, and
	// the test file's uses add to the artifact's.
	got = genericCode("package main; import s \"slices\"; import forge__sort \"sort\"\nfunc F(a, b []int) int { return s.Compare(a, b) }\n",
		"package main\n\nimport \"slices\"\n\nfunc T() { slices.Reverse([]int{}) }\n")
	require.Len(t, got, 2)
	assert.Equal(t, []string{"cmp", "slices"}, []string{pkgOf(got[0]), pkgOf(got[1])})
	assert.True(t, hasFunc(got[:1], "Compare") && hasFunc(got[:1], "isNaN"))
	assert.False(t, hasFunc(got[:1], "Less"), got[0])
	assert.True(t, hasFunc(got[1:], "Compare") && hasFunc(got[1:], "Reverse"))
	assert.Contains(t, got[1], "import \"cmp\"")

	// A blank import still needs the package to exist.
	assert.Equal(t, []string{"package slices\n"}, genericCode("package main\n\nimport _ \"slices\"\n"))

	var names []string
	for _, g := range genericSources() {
		names = append(names, g.name)
	}
	assert.Equal(t, []string{"cmp", "maps", "slices"}, names)
}

// TestPrunedSameAsWhole: code sees the same generic packages pruned as whole: every call gives
// the same value, or fails in both (yaegi v0.16.1 cannot instantiate many of them, e.g. those
// with an S ~[]E parameter given a slice literal: "undefined type for E", pruned or not).
func TestPrunedSameAsWhole(t *testing.T) {
	calls := []string{
		"[]int{slices.Index([]int{5, 6}, 6)}",
		"[]int{slices.IndexFunc([]int{5, 6}, func(x int) bool { return x > 5 })}",
		"b2i(slices.Contains([]int{5, 6}, 6))",
		"b2i(slices.ContainsFunc([]int{5, 6}, func(x int) bool { return x > 9 }))",
		"b2i(slices.Equal([]int{1}, []int{1}))",
		"slices.Clone([]int{1, 2})",
		"slices.Insert([]int{1, 4}, 1, 2, 3)",
		"slices.Delete([]int{1, 2, 3, 4}, 1, 3)",
		"slices.Replace([]int{1, 2, 3}, 0, 2, 7, 8, 9)",
		"slices.Compact([]int{1, 1, 2, 2, 2, 3})",
		"slices.Concat([]int{1}, []int{2, 3})",
		"[]int{slices.Compare([]int{1, 2}, []int{1, 3})}",
		"[]int{cmp.Compare(1, 2)}",
		"b2i(cmp.Less(2.5, 1.0))",
		"[]int{len(maps.Clone(map[int]int{1: 1}))}",
	}
	works := 0
	for _, call := range calls {
		code := "package main\n\nimport (\n\t\"cmp\"\n\t\"maps\"\n\t\"slices\"\n)\n\n" +
			"func b2i(b bool) []int {\n\tif b {\n\t\treturn []int{1}\n\t}\n\treturn []int{0}\n}\n\nfunc F() []int { return " + call + " }\n"
		var whole []string
		for _, g := range genericSources() {
			whole = append(whole, g.code)
		}
		// The error's last part (its position differs: the pruned source is shorter).
		reason := func(stage string, err error) string {
			parts := strings.Split(err.Error(), ": ")
			return stage + " error: " + parts[len(parts)-1]
		}
		results := map[bool]string{}
		for _, pruned := range []bool{false, true} {
			gen := whole
			if pruned {
				gen = genericCode(code)
			}
			in, err := newInterpreter(&slot{}, false, nil, nil, gen, importPaths(code))
			require.NoError(t, err)
			if _, err = in.Eval(code); err != nil {
				results[pruned] = reason("compile", err)
				continue
			}
			v, err := in.Eval("F()")
			if err != nil {
				results[pruned] = reason("run", err)
				continue
			}
			results[pruned] = fmt.Sprint(v.Interface())
		}
		assert.Equal(t, results[false], results[true], call)
		if !strings.Contains(results[true], " error: ") {
			works++
		}
	}
	assert.GreaterOrEqual(t, works, 5, "some generic functions work in yaegi")
	t.Logf("%d of %d calls work in yaegi v0.16.1 (pruned or whole)", works, len(calls))
}

// TestPrintGoesToLogs: fmt.Print, Printf and Println write to the call's logs (with the log
// capability), in process and in a worker, now that the symbol tables are loaded without the
// key that made interp.Use redefine them.
func TestPrintGoesToLogs(t *testing.T) {
	code := "package artifact\n\nimport \"fmt\"\n\nfunc Double(n int) int {\n\tfmt.Println(\"println\", n)\n\tfmt.Printf(\"printf %d\\n\", n)\n\tfmt.Print(\"print \", n)\n\treturn 2 * n\n}\n"
	for _, iso := range []string{"", sandbox.IsolationProcess} {
		t.Run("isolation="+iso, func(t *testing.T) {
			sb := New(Options{})
			defer sb.Close()
			p, err := sb.Compile(context.Background(), sandbox.Source{Code: code, Limits: sandbox.Limits{Isolation: iso}})
			require.NoError(t, err)
			defer p.Close()
			in := sandbox.Input{Args: json.RawMessage(`[2]`), Caps: sandbox.Capabilities{Log: true}}
			out, err := sb.Run(context.Background(), p, in)
			require.NoError(t, err)
			assert.Equal(t, "4", string(out.Value))
			assert.Equal(t, []string{"println 2", "printf 2", "print 2"}, out.Logs)
			in.Caps.Log = false
			out, err = sb.Run(context.Background(), p, in)
			require.NoError(t, err)
			assert.Empty(t, out.Logs)
		})
	}
}

// TestGenericOnDemand: code that imports no generic package gets none (its interpreter has no
// slices package to import), and code that uses slices, with or without the import (the rewriter
// adds forgotten imports), gets it.
func TestGenericOnDemand(t *testing.T) {
	sb := New(Options{})
	defer sb.Close()
	ctx := context.Background()
	for _, code := range []string{
		"package artifact\n\nimport \"slices\"\n\nfunc Has(xs []int) bool { return slices.Contains(xs, 3) }\n",
		"package artifact\n\nfunc Has(xs []int) bool { return slices.Contains(xs, 3) }\n",
	} {
		p, err := sb.Compile(ctx, sandbox.Source{Code: code})
		require.NoError(t, err, code)
		require.Len(t, p.(*Program).generic, 1, "slices.Contains needs nothing of cmp")
		assert.Contains(t, p.(*Program).generic[0], "func Contains[")
		out, err := sb.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[[1, 2, 3]]`)})
		require.NoError(t, err)
		assert.Equal(t, "true", string(out.Value))
	}
	p, err := sb.Compile(ctx, sandbox.Source{Code: "package artifact\n\nimport \"strings\"\n\nfunc Up(s string) string { return strings.ToUpper(s) }\n"})
	require.NoError(t, err)
	prog := p.(*Program)
	assert.Nil(t, prog.generic)
	in, err := newInterpreter(&slot{}, false, nil, nil, prog.generic, prog.imports)
	require.NoError(t, err)
	_, err = in.Compile("import \"slices\"")
	require.Error(t, err, "an interpreter for code without generic imports has no generic packages")
	assert.True(t, strings.Contains(err.Error(), "slices"), err.Error())
}

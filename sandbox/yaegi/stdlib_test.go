package yaegi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

func TestGenericImports(t *testing.T) {
	tests := []struct {
		name string
		code []string
		want []string
	}{
		{"none", []string{"package main\n\nimport \"strings\"\n\nfunc F() {}\n"}, nil},
		{"slices brings cmp", []string{"package main\n\nimport \"slices\"\n"}, []string{"cmp", "slices"}},
		{"maps alone", []string{"package main\n\nimport \"maps\"\n"}, []string{"maps"}},
		{"renamed, one line", []string{"package main; import s \"slices\"; import forge__sort \"sort\"\n"}, []string{"cmp", "slices"}},
		{"artifact and tests", []string{"package main\n\nimport \"cmp\"\n", "package main\n\nimport \"maps\"\n"}, []string{"cmp", "maps"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, genericImports(tt.code...), tt.name)
	}
	// Every generic source yaegi ships is known, with its imports.
	var names []string
	for _, gs := range genericSources {
		names = append(names, gs.name)
	}
	assert.Equal(t, []string{"cmp", "maps", "slices"}, names)
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
		assert.Equal(t, []string{"cmp", "slices"}, p.(*Program).generic)
		out, err := sb.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[[1, 2, 3]]`)})
		require.NoError(t, err)
		assert.Equal(t, "true", string(out.Value))
	}
	p, err := sb.Compile(ctx, sandbox.Source{Code: "package artifact\n\nimport \"strings\"\n\nfunc Up(s string) string { return strings.ToUpper(s) }\n"})
	require.NoError(t, err)
	prog := p.(*Program)
	assert.Nil(t, prog.generic)
	in, err := newInterpreter(&slot{}, false, nil, nil, prog.generic)
	require.NoError(t, err)
	_, err = in.Compile("import \"slices\"")
	require.Error(t, err, "an interpreter for code without generic imports has no generic packages")
	assert.True(t, strings.Contains(err.Error(), "slices"), err.Error())
}

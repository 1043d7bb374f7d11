// Command embedder is an agent that embeds forge as a library, outside cmd/forge, in a module of
// its own: the isolation test (sandbox/yaegi/embed_test.go) builds it and checks that process
// isolation works with no worker plumbing, through yaegi.MaybeServeWorker ("self"), a forge
// binary on $FORGE_WORKER or PATH ("plain"), and fails with a clear error when there is none.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

// programs are what the agent runs isolated: an innocent one and three that would take down an
// in-process host.
var programs = []struct{ name, code, args string }{
	{"add", "package artifact\n\nfunc Add(a, b int) int { return a + b }\n", "[2, 3]"},
	{"init_bomb", "package artifact\n\nvar big = make([]byte, 1536<<20)\n\nfunc init() {\n\tfor i := range big {\n\t\tbig[i] = 1\n\t}\n}\n\nfunc F() int { return len(big) }\n", "[]"},
	{"native_recursion", "package artifact\n\nimport \"strings\"\n\nfunc shout(r rune) rune {\n\tstrings.Map(shout, \"x\")\n\treturn r\n}\n\nfunc Shout(s string) string { return strings.Map(shout, s) }\n", `["abc"]`},
	{"after", "package artifact\n\nfunc Twice(s string) string { return s + s }\n", `["ok"]`},
}

type result struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value,omitempty"`
	Kind  string          `json:"kind,omitempty"`
	Error string          `json:"error,omitempty"`
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "self" {
		yaegi.MaybeServeWorker()
	}
	sb := yaegi.New(yaegi.Options{Isolation: sandbox.IsolationProcess})
	defer sb.Close()
	ctx := context.Background()
	enc := json.NewEncoder(os.Stdout)
	limits := sandbox.Limits{MemoryBytes: 64 << 20}
	for _, p := range programs {
		r := result{Name: p.name}
		prog, err := sb.Compile(ctx, sandbox.Source{Code: p.code, Limits: limits})
		if err == nil {
			var out sandbox.Output
			out, err = sb.Run(ctx, prog, sandbox.Input{Args: json.RawMessage(p.args), Limits: limits})
			r.Value = out.Value
		}
		if err != nil {
			r.Kind, r.Error = string(sandbox.KindOf(err)), err.Error()
		}
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

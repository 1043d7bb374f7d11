package yaegi_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

func Example() {
	sb := yaegi.New(yaegi.Options{})
	defer sb.Close()
	ctx := context.Background()
	prog, err := sb.Compile(ctx, sandbox.Source{
		Code: "package artifact\n\nfunc HasCloseElements(xs []float64, t float64) bool {\n\tfor i := range xs {\n\t\tfor j := i + 1; j < len(xs); j++ {\n\t\t\tif d := xs[i] - xs[j]; d < t && -d < t {\n\t\t\t\treturn true\n\t\t\t}\n\t\t}\n\t}\n\treturn false\n}\n",
		Func: "has_close_elements",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := sb.Run(ctx, prog, sandbox.Input{Args: json.RawMessage(`{"xs": [1.0, 2.8, 3.0], "t": 0.3}`)})
	fmt.Println(string(out.Value), err)
	// Output: true <nil>
}

func ExampleSandbox_Compile_policy() {
	sb := yaegi.New(yaegi.Options{})
	defer sb.Close()
	_, err := sb.Compile(context.Background(), sandbox.Source{Code: "package artifact\n\nimport \"os\"\n\nfunc Home() string { return os.Getenv(\"HOME\") }\n"})
	fmt.Println(sandbox.KindOf(err))
	fmt.Println(err)
	// Output:
	// policy
	// sandbox: policy: line 3: import "os" is not allowed (hint: artifacts get no files, processes or environment: take data as arguments and return results)
}

func ExampleRunTests() {
	results, err := yaegi.RunTests(context.Background(),
		"func Double(x int) int { return 2 * x }",
		"package main\n\nimport (\n\t\"testing\"\n\n\t\"github.com/stretchr/testify/assert\"\n)\n\nfunc TestDouble(t *testing.T) { assert.Equal(t, 4, Double(2)) }\n")
	for _, r := range results {
		fmt.Println(r.Name, r.Passed)
	}
	fmt.Println(err)
	// Output:
	// TestDouble true
	// <nil>
}

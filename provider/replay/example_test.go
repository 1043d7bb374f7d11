package replay_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/replay"
)

// A cassette answers by role, method, kind and attempt; the second generate request for
// text.upper gets the line with attempt 2, and an "error" line simulates a provider failure.
func ExampleNew() {
	cassette := []byte(`
{"role":"text","method":"upper","kind":"generate","attempt":1,"error":"unavailable"}
{"role":"text","method":"upper","kind":"generate","attempt":2,"raw":"Here:\n` + "```go" + `\npackage main\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n` + "```" + `"}
`)
	c, err := replay.New("demo.jsonl", cassette)
	if err != nil {
		panic(err)
	}
	req := provider.Request{Kind: provider.Generate, Role: "text", Method: "upper"}

	_, err = c.Generate(context.Background(), req)
	var pe *provider.Error
	if errors.As(err, &pe) {
		fmt.Println("first:", pe.Kind, "retriable:", pe.Retriable())
	}
	a, _ := c.Generate(context.Background(), req)
	fmt.Print("second:\n", a.Code)
	_, err = c.Generate(context.Background(), req)
	fmt.Println("third:", err)
	// Output:
	// first: unavailable retriable: true
	// second:
	// package artifact
	//
	// import "strings"
	//
	// func Upper(s string) string { return strings.ToUpper(s) }
	// third: provider replay: config: no cassette answer for text.upper generate attempt 3 (call attempt 0, question e29044fa0bff8500) in demo.jsonl: add a line with "question":"e29044fa0bff8500" to answer this request in any process
}

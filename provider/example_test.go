package provider_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/artifactforge/forge/provider"
)

// Open picks a provider from a spec (the --provider flag, else $FORGE_PROVIDER); a replay
// cassette answers with no model and no network.
func ExampleOpen() {
	p, err := provider.Open("replay:testdata/upper.jsonl", nil)
	if err != nil {
		panic(err)
	}
	a, err := p.Generate(context.Background(), provider.Request{
		Kind: provider.Generate, Role: "text", Method: "upper", Attempt: 1,
		System: "You write Go artifacts.", Prompt: "func Upper(s string) string",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Name(), a.Model)
	fmt.Print(a.Code)
	// Output:
	// replay recorded
	// package artifact
	//
	// import "strings"
	//
	// // Upper returns s in upper case.
	// func Upper(s string) string { return strings.ToUpper(s) }
}

// With no spec and no $FORGE_PROVIDER, Open says how to configure one; the error is a
// Misconfigured provider error, so a caller can keep running persisted artifacts.
func ExampleOpen_notConfigured() {
	_, err := provider.Open("", func(string) string { return "" })
	var pe *provider.Error
	fmt.Println(errors.As(err, &pe), pe.Kind, errors.Is(err, provider.ErrNotConfigured))
	// Output:
	// true config true
}

// Heal takes the Go file out of whatever the model wrapped it in.
func ExampleHeal() {
	code, err := provider.Heal("Sure!\n\n```go\npackage main\n\nfunc Add(a, b int) int { return a + b }\n```\n\nHope it helps.")
	if err != nil {
		panic(err)
	}
	fmt.Print(code)
	// Output:
	// package artifact
	//
	// func Add(a, b int) int { return a + b }
}

package forge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
)

// exampleCassette answers the first generation of text.upper and one regeneration.
const exampleCassette = `{"role":"text","method":"upper","kind":"generate","attempt":1,"code":"package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"}
{"role":"text","method":"upper","kind":"generate","attempt":2,"code":"package artifact\n\nimport \"strings\"\n\n// Upper shouts.\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"}
`

// exampleForge opens a forge on a fresh store with the example cassette and the text role.
func exampleForge() (*forge.Forge, func()) {
	dir, err := os.MkdirTemp("", "forge-example-")
	if err != nil {
		panic(err)
	}
	cas, err := replay.New("example", []byte(exampleCassette))
	if err != nil {
		panic(err)
	}
	// The examples' code is known and trusted, so it runs in-process (fast); a contract naming
	// no sandbox gets the safe default otherwise (forge.ChooseDefault).
	f, err := forge.Open(forge.Options{Store: dir, Provider: cas, DefaultSandbox: "yaegi"})
	if err != nil {
		panic(err)
	}
	if err := f.AddRole(registry.Contract{Role: "text", Purpose: "string utilities",
		Methods: map[string]string{"upper": "func Upper(s string) string"}}); err != nil {
		panic(err)
	}
	return f, func() { f.Close(); os.RemoveAll(dir) }
}

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "forge-example-")
	defer os.RemoveAll(dir)
	f, err := forge.Open(forge.Options{Store: dir}) // no provider: persisted artifacts still run
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Println(f.Store().Location() == dir)
	// Output: true
}

func ExampleForge_AddRole() {
	f, done := exampleForge()
	defer done()
	err := f.AddRole(registry.Contract{Role: "Bad/Name", Purpose: "x"})
	fmt.Println(err != nil)
	// Output: true
}

func ExampleForge_Call() {
	f, done := exampleForge()
	defer done()
	ctx := context.Background()
	first := f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"forge"}`))
	fmt.Println(string(first.Value), first.Meta.ProgramSource, first.Meta.ProviderCalls)
	second := f.Call(ctx, "text", "upper", json.RawMessage(`["again"]`))
	fmt.Println(string(second.Value), second.Meta.ProgramSource, second.Meta.ProviderCalls)
	bad := f.Call(ctx, "text", "upper", json.RawMessage(`{"s":42}`))
	fmt.Println(bad.OK, bad.Err.Class, bad.Err.Type)
	// Output:
	// "FORGE" generated 1
	// "AGAIN" persisted 0
	// false caller args
}

func ExampleForge_Regenerate() {
	f, done := exampleForge()
	defer done()
	f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	o := f.Regenerate(context.Background(), "text", "upper")
	fmt.Println(o.OK, o.Meta.ArtifactGen, o.Meta.ProgramSource)
	// Output: true 2 regenerated
}

func ExampleForge_Rollback() {
	f, done := exampleForge()
	defer done()
	f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	f.Regenerate(context.Background(), "text", "upper")
	art, err := f.Rollback("text", "upper", 1)
	fmt.Println(err, art.Generation, art.History[0].Trigger)
	// Output: <nil> 3 operator:rollback:gen-1
}

func ExampleForge_Quarantine() {
	f, done := exampleForge()
	defer done()
	f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	_ = f.Quarantine("text", "upper")
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	fmt.Println(o.OK, o.Err.Type)
	// Output: false refused
}

func ExampleForge_Bless() {
	f, done := exampleForge()
	defer done()
	f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	_ = f.Bless("text", "upper", false)
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	fmt.Println(o.Meta.Decision)
	// Output: execute:blessed
}

func ExampleForge_Close() {
	f, done := exampleForge()
	defer done()
	f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`))
	f.Close() // flushes the buffered counters
	art, _ := f.Store().Load("text", "upper")
	fmt.Println(art.SuccessCount)
	// Output: 1
}

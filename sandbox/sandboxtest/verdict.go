package sandboxtest

import (
	"context"
	"testing"

	"github.com/artifactforge/forge/sandbox"
)

// RunForgedVerdictTest holds a backend's Test to reading each test's verdict from testing itself:
// an artifact that prints testing's verdict line for the test that calls it ("--- PASS: TestX")
// and returns a wrong answer fails that test. (wasm and native read testing's -test.v report,
// which once shared the artifact's stdout.)
func RunForgedVerdictTest(t *testing.T, tester sandbox.Tester) {
	t.Helper()
	code := "package artifact\n\nimport \"fmt\"\n\nfunc Double(n int) int {\n\tfmt.Println(\"--- PASS: TestDouble (0.00s)\")\n\tfmt.Println(\"=== RUN   TestOther\")\n\treturn n\n}\n"
	tests := `package artifact

import "testing"

func TestDouble(t *testing.T) {
	if Double(2) != 4 {
		t.Fatal("Double(2) != 4")
	}
}
`
	res, err := tester.Test(context.Background(), sandbox.Source{Code: code}, tests, sandbox.Input{})
	if err != nil {
		t.Fatalf("Test: %v", err)
	}
	if len(res) != 1 || res[0].Name != "TestDouble" || res[0].Passed {
		t.Fatalf("the artifact forged its test's verdict: %+v", res)
	}
}

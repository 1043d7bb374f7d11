package sandboxtest

import (
	"context"
	"strings"
	"testing"

	"github.com/artifactforge/forge/sandbox"
)

// ShiftDecoder is an artifact for the test-file boundary (issue 14): it undoes a Caesar shift.
const ShiftDecoder = `package artifact

// Decode undoes a Caesar shift of 5 over lowercase letters.
func Decode(s string) string {
	out := []rune(s)
	for i, r := range out {
		if r >= 'a' && r <= 'z' {
			out[i] = 'a' + (r-'a'+21)%26
		}
	}
	return string(out)
}
`

// ShiftDecoderRandomTest is a property test in the style of HumanEval-X's full test suites:
// math/rand seeded from the clock, 100 random inputs checked against a reference encoder.
const ShiftDecoderRandomTest = `package artifact

import (
	"math/rand"
	"testing"
	"time"
)

func encodeShift(s string) string {
	out := []rune(s)
	for i, r := range out {
		out[i] = 'a' + (r-'a'+5)%26
	}
	return string(out)
}

func TestDecodeRandom(t *testing.T) {
	rand.Seed(time.Now().UnixNano())
	for i := 0; i < 100; i++ {
		b := make([]rune, 10+rand.Intn(11))
		for j := range b {
			b[j] = rune('a' + rand.Intn(26))
		}
		s := string(b)
		if got := Decode(encodeShift(s)); got != s {
			t.Fatalf("Decode(encodeShift(%q)) = %q", s, got)
		}
	}
}
`

// RunClockTests holds a backend's Test to the test-file rules: a test file that seeds math/rand
// from time.Now passes; a test file reads the real clock (not a fake one); time.Now in the artifact is refused with the artifact's message; an
// artifact that calls a clock helper of the test file is refused.
func RunClockTests(t *testing.T, tester sandbox.Tester) {
	ctx := context.Background()
	res, err := tester.Test(ctx, sandbox.Source{Code: ShiftDecoder}, ShiftDecoderRandomTest, sandbox.Input{})
	if err != nil || len(res) != 1 || !res[0].Passed {
		t.Fatalf("a test file that seeds math/rand from time.Now must run and pass: %+v %v", res, err)
	}
	real := `package artifact

import (
	"testing"
	"time"
)

func TestRealClock(t *testing.T) {
	if now := time.Now(); now.Before(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("the test's clock reads %v: not the real clock", now)
	}
	start := time.Now()
	if d := time.Since(start); d < 0 || d > time.Minute {
		t.Fatalf("time.Since measured %v", d)
	}
}
`
	res, err = tester.Test(ctx, sandbox.Source{Code: ShiftDecoder}, real, sandbox.Input{})
	if err != nil || len(res) != 1 || !res[0].Passed {
		t.Fatalf("a test file reads the real clock: %+v %v", res, err)
	}
	clocked := strings.Replace(ShiftDecoder, "package artifact\n", "package artifact\n\nimport \"time\"\n", 1)
	clocked = strings.Replace(clocked, "return string(out)", "return string(out) + time.Now().String()", 1)
	_, err = tester.Test(ctx, sandbox.Source{Code: clocked}, ShiftDecoderRandomTest, sandbox.Input{})
	if e := sandbox.AsError(err); err == nil || e.Kind != sandbox.KindPolicy || e.Message != "time.Now is not available in the sandbox" {
		t.Fatalf("time.Now in the artifact under test: want the artifact's policy refusal, got %v", err)
	}
	helper := strings.Replace(ShiftDecoder, "return string(out)", "return string(out) + clock()", 1)
	tests := ShiftDecoderRandomTest + "\nfunc clock() string { return time.Now().String() }\n"
	_, err = tester.Test(ctx, sandbox.Source{Code: helper}, tests, sandbox.Input{})
	if e := sandbox.AsError(err); err == nil || e.Kind != sandbox.KindPolicy || !strings.Contains(e.Message, "the artifact uses clock, which only the test file declares or imports") {
		t.Fatalf("an artifact calling the test file's clock helper: want a policy refusal, got %v", err)
	}
}

// HumanEvalClockTests are property tests for the two HumanEval-X problems whose test setup
// imports math/rand and time (Go/38, Go/50; their checked-in example tests are empty), written
// the way the benchmark's full suites are: math/rand seeded from time.Now, 100 random lowercase
// strings, each decoded after encoding. They are appended to the problem's test_setup.
var HumanEvalClockTests = map[string]string{
	"Go/38": `
func TestDecodeCyclicRandom(t *testing.T) {
	assert := assert.New(t)
	rand.Seed(time.Now().UnixNano())
	for i := 0; i < 100; i++ {
		var b strings.Builder
		for j := 0; j < 10+rand.Intn(11); j++ {
			b.WriteRune(rune('a' + rand.Intn(26)))
		}
		s := b.String()
		assert.Equal(s, DecodeCyclic(EncodeCyclic(s)))
	}
	_ = math.Pi
}
`,
	"Go/50": `
func TestDecodeShiftRandom(t *testing.T) {
	assert := assert.New(t)
	rand.Seed(time.Now().UnixNano())
	for i := 0; i < 100; i++ {
		b := make([]rune, 10+rand.Intn(11))
		for j := range b {
			b[j] = rune('a' + rand.Intn(26))
		}
		s := string(b)
		assert.Equal(s, DecodeShift(EncodeShift(s)))
	}
}
`,
}

// RunHumanEvalClockTests runs HumanEvalClockTests against the problems' canonical solutions
// through tester (what forge test calls): both must pass.
func RunHumanEvalClockTests(t *testing.T, tester sandbox.Tester) {
	n := 0
	for _, p := range LoadHumanEval(t) {
		test, ok := HumanEvalClockTests[p.TaskID]
		if !ok {
			continue
		}
		n++
		res, err := tester.Test(context.Background(), sandbox.Source{Code: p.Prompt + p.CanonicalSolution}, p.TestSetup+test, sandbox.Input{})
		if err != nil || len(res) != 1 || !res[0].Passed {
			t.Errorf("%s: a test seeding math/rand from time.Now must run and pass: %+v %v", p.TaskID, res, err)
		}
	}
	if n != len(HumanEvalClockTests) {
		t.Fatalf("found %d of the %d problems", n, len(HumanEvalClockTests))
	}
}

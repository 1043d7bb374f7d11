package yaegi

import (
	"context"
	"testing"
)

func TestSmokeTests(t *testing.T) {
	art := "import (\n    \"math\"\n)\nfunc HasCloseElements(numbers []float64, threshold float64) bool {\n    for i := 0; i < len(numbers); i++ {\n        for j := i + 1; j < len(numbers); j++ {\n            var distance float64 = math.Abs(numbers[i] - numbers[j])\n            if distance < threshold {\n                return true\n            }\n        }\n    }\n    return false\n}\n"
	tst := "package main\n\nimport (\n    \"testing\"\n    \"github.com/stretchr/testify/assert\"\n    \"github.com/stretchr/testify/require\"\n)\nfunc TestHasCloseElements(t *testing.T) {\n    assert := assert.New(t)\n    assert.Equal(false, HasCloseElements([]float64{1.0, 2.0, 3.0}, 0.5))\n    assert.Equal(true, HasCloseElements([]float64{1.0, 2.8, 3.0, 4.0, 5.0, 2.0}, 0.3))\n}\nfunc TestFail(t *testing.T) { require.Equal(t, 1, 2); t.Log(\"not here\") }\nfunc TestSub(t *testing.T) { t.Run(\"a\", func(t *testing.T) { t.Errorf(\"bad %d\", 3) }); t.Run(\"b\", func(t *testing.T) { assert.Len(t, []int{1}, 1) }) }\nfunc TestLoop(t *testing.T) { for {} }\nfunc TestPanic(t *testing.T) { var m map[string]int; m[\"a\"] = 1 }\nfunc TestAfter(t *testing.T) { assert.True(t, HasCloseElements([]float64{1, 1}, 0.1)) }\n"
	res, err := RunTests(context.Background(), art, tst)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("%s %v %q %v", r.Name, r.Passed, r.Message, r.Duration)
	}
}

package sandbox

import (
	"fmt"
	"go/token"
	"strings"
	"testing"
)

func TestParseFileBounds(t *testing.T) {
	doubling := func(n int, op string) string {
		var b strings.Builder
		b.WriteString("package artifact\nconst c0 = \"xxxxxxxxxxxxxxxx\"\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "const c%d = c%d %s c%d\n", i, i-1, op, i-1)
		}
		fmt.Fprintf(&b, "func F() int { return len(c%d) }\n", n)
		return b.String()
	}
	intDoubling := func(n int) string {
		var b strings.Builder
		b.WriteString("package artifact\nconst c0 = 1 << 62\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "const c%d = c%d * c%d\n", i, i-1, i-1)
		}
		b.WriteString("func F() int { return 1 }\n")
		return b.String()
	}
	cases := []struct {
		name, code string
		refuse     string // "" accepts
		line       int
	}{
		{"small", "package artifact\nfunc F() int { return 1 }", "", 0},
		{"no package clause", "func F() int { return 1 }", "", 0},
		{"big source", "package artifact\n" + strings.Repeat("// padding padding padding\n", MaxSourceBytes/27+1), "bytes, over the", 0},
		{"long line", "package artifact\n\nvar s = \"" + strings.Repeat("x", MaxLineBytes) + "\"\n", "line 3 is", 3},
		{"line at the bound", "package artifact\nvar s = \"" + strings.Repeat("x", MaxLineBytes-11) + "\"\n", "", 0},
		{"deep parens", "package artifact\nfunc F() int { return " + strings.Repeat("(", MaxNesting) + "1" + strings.Repeat(")", MaxNesting) + " }", "nested more than", 2},
		{"long sum chain", "package artifact\nfunc F() int { return 0" + strings.Repeat("+1", MaxNesting) + " }", "nested more than", 2},
		{"string doubling", doubling(30, "+"), "string constant of", 0},
		{"string doubling in a var", "package artifact\nconst a = \"" + strings.Repeat("x", 4000) + "\"\nconst b = a + a + a + a\nconst c = b + b + b + b\nvar v = c + c + c + c + c\nfunc F() string { return v }", "string constant of", 5},
		{"small string doubling", doubling(8, "+"), "", 0},
		{"many mid-size constants", func() string {
			var b strings.Builder
			b.WriteString("package artifact\nconst a = \"" + strings.Repeat("x", 1000) + "\"\nconst b = a+a+a+a+a+a+a+a\nconst c = b+b+b+b+b+b+b+b\n")
			for i := range 40 {
				fmt.Fprintf(&b, "const d%d = c\n", i)
			}
			b.WriteString("func F() int { return 1 }\n")
			return b.String()
		}(), "add up to more than", 0},
		{"int squaring", intDoubling(6), "over 512 bits", 0},
		{"huge shift", "package artifact\nconst big = 1 << 100000\nfunc F() int { return 1 }", "shift count", 2},
		{"shift over 512 bits", "package artifact\nconst big = 1 << 600\nfunc F() int { return 1 }", "over 512 bits", 2},
		{"ordinary constants", "package artifact\nconst (\n\t_ = iota\n\tKB = 1 << (10 * iota)\n\tMB\n\tGB\n\tTB\n)\nconst MaxU = ^uint64(0)\nconst s = \"a\" + \"b\"\nconst n = len(s) * 1000\nfunc F() int { return KB + n }", "", 0},
		{"local constants", "package artifact\nfunc F() int {\n\tconst a = \"xx\"\n\tconst b = a + a\n\treturn len(b)\n}", "", 0},
		{"cycle left to the type checker", "package artifact\nconst a = b + \"x\"\nconst b = a + \"y\"\nfunc F() string { return a }", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ParseFile(token.NewFileSet(), c.code)
			if c.refuse == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", c.refuse)
			}
			e := AsError(err)
			if e.Kind != KindCompile || !strings.Contains(e.Message, c.refuse) || e.Hint == "" {
				t.Fatalf("error %v: want a compile error with a hint containing %q", err, c.refuse)
			}
			if c.line > 0 && e.Line != c.line {
				t.Fatalf("error %v: line %d, want %d", err, e.Line, c.line)
			}
		})
	}
}

// BenchmarkParseFileBounds is what the bounds cost on a typical artifact (same-run baseline:
// the plain parse).
func BenchmarkParseFileBounds(b *testing.B) {
	code := "package artifact\n\nimport \"strings\"\n\nconst sep = \", \"\n\n// Join joins words.\nfunc Join(words []string, upper bool) string {\n\tout := make([]string, 0, len(words))\n\tfor _, w := range words {\n\t\tif upper {\n\t\t\tw = strings.ToUpper(w)\n\t\t}\n\t\tout = append(out, w)\n\t}\n\treturn strings.Join(out, sep) + \"!\"\n}\n"
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := parserParse(token.NewFileSet(), code); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bounded", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, _, err := ParseFile(token.NewFileSet(), code); err != nil {
				b.Fatal(err)
			}
		}
	})
}

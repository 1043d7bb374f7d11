package provider_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
)

const upper = `package artifact

import "strings"

// Upper returns s in upper case.
func Upper(s string) string {
	return strings.ToUpper(s)
}
`

func toolArgs(code string) string {
	b, _ := json.Marshal(map[string]string{"code": code})
	return string(b)
}

func TestHeal(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string // exact healed code; empty when wantErr
		// contains is checked instead of want when set.
		contains []string
		wantErr  bool
	}{
		{
			name: "prose around a go fence",
			raw:  "Sure! Here is the implementation:\n\n```go\n" + upper + "```\n\nIt uses `strings.ToUpper`, which handles Unicode.",
			want: upper,
		},
		{
			name: "golang tag and CRLF line endings",
			raw:  strings.ReplaceAll("Here you go.\r\n```golang\r\n"+upper+"```\r\n", "\n", "\r\n"),
			want: upper,
		},
		{
			name: "package main is renamed",
			raw:  "```go\npackage main\n\nimport \"strings\"\n\n// Upper returns s in upper case.\nfunc Upper(s string) string {\n\treturn strings.ToUpper(s)\n}\n```",
			want: upper,
		},
		{
			name: "any other package name is renamed",
			raw:  "```go\npackage text\n\nfunc Add(a, b int) int { return a + b }\n```",
			want: "package artifact\n\nfunc Add(a, b int) int { return a + b }\n",
		},
		{
			name: "missing package clause is added",
			raw:  "```go\nfunc Add(a, b int) int {\n\treturn a + b\n}\n```",
			want: "package artifact\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
		},
		{
			name: "largest of several blocks wins over a usage snippet",
			raw: "The fix:\n```go\nreturn a + b\n```\n\nFull file:\n```go\n" + upper + "```\n\nUsage:\n```go\n" +
				"fmt.Println(Upper(\"hi\"))\n```\n",
			want: upper,
		},
		{
			name: "implementation preferred over a larger test block",
			raw: "```go\n" + upper + "```\n\nAnd a test:\n```go\npackage artifact\n\nimport \"testing\"\n\n" +
				"func TestUpper(t *testing.T) {\n\tif Upper(\"a\") != \"A\" {\n\t\tt.Fatal(\"want A\")\n\t}\n\tif Upper(\"b\") != \"B\" {\n\t\tt.Fatal(\"want B\")\n\t}\n}\n```\n",
			want: upper,
		},
		{
			name: "shell and json blocks are ignored",
			raw:  "Run it with:\n```bash\ngo test ./...\n```\n```json\n{\"a\": 1}\n```\n```go\n" + upper + "```",
			want: upper,
		},
		{
			name:     "fence indented inside a list item",
			raw:      "1. Add the function:\n\n     ```go\n     package artifact\n\n     func Add(a, b int) int { return a + b }\n     ```\n2. Done.",
			contains: []string{"package artifact", "func Add(a, b int) int { return a + b }"},
		},
		{
			name: "whole answer wrapped in a markdown fence",
			raw:  "````markdown\nHere:\n```go\n" + upper + "```\n````",
			want: upper,
		},
		{
			name: "untagged fence that parses as go",
			raw:  "```\n" + upper + "```",
			want: upper,
		},
		{
			name: "tilde fence",
			raw:  "~~~go\n" + upper + "~~~\n",
			want: upper,
		},
		{
			name:     "unclosed fence cut off by the token limit is still returned",
			raw:      "```go\npackage artifact\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc Sub(a, b int) int {\n\treturn a -",
			contains: []string{"package artifact", "func Sub(a, b int) int {"},
		},
		{
			name:     "go block with a syntax error is still returned for gate feedback",
			raw:      "```go\npackage artifact\n\nfunc Add(a, b int) int {\n\treturn a +\n```",
			contains: []string{"package artifact", "return a +"},
		},
		{
			name: "reasoning block with a draft is dropped",
			raw:  "<think>\nMaybe:\n```go\npackage artifact\n\nfunc Upper(s string) string { return s }\n\n// a longer draft that would otherwise win\n```\n</think>\nFinal:\n```go\n" + upper + "```",
			want: upper,
		},
		{
			name: "openai tool call arguments",
			raw:  toolArgs(upper),
			want: upper,
		},
		{
			name: "tool call with package main and a fence inside the argument",
			raw:  toolArgs("```go\npackage main\n\nfunc Add(a, b int) int { return a + b }\n```"),
			want: "package artifact\n\nfunc Add(a, b int) int { return a + b }\n",
		},
		{
			name: "whole tool call object",
			raw:  `{"type":"function","function":{"name":"submit_code","arguments":` + strconvQuote(toolArgs(upper)) + `}}`,
			want: upper,
		},
		{
			name: "anthropic tool_use input",
			raw:  `{"type":"tool_use","id":"toolu_1","name":"submit_code","input":` + toolArgs(upper) + `}`,
			want: upper,
		},
		{
			name: "unfenced code",
			raw:  upper,
			want: upper,
		},
		{
			name: "unfenced code after a line of prose",
			raw:  "Here is the code:\n\n" + upper + "\nThis works for ASCII and Unicode.",
			want: upper,
		},
		{
			name: "BOM is stripped",
			raw:  "\ufeff" + upper,
			want: upper,
		},
		{name: "empty answer", raw: "  \n\t", wantErr: true},
		{name: "prose only", raw: "I'm sorry, I cannot help with that request.", wantErr: true},
		{name: "python block", raw: "```python\ndef upper(s):\n    return s.upper()\n```", wantErr: true},
		{name: "json without code", raw: `{"answer": "use strings.ToUpper"}`, wantErr: true},
		{name: "garbage", raw: "}}}{{{ ;; func(", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := provider.Heal(tt.raw)
			if tt.wantErr {
				require.Error(t, err)
				assert.ErrorIs(t, err, provider.ErrNoCode)
				return
			}
			require.NoError(t, err)
			if tt.contains != nil {
				for _, c := range tt.contains {
					assert.Contains(t, got, c)
				}
				assert.True(t, strings.HasPrefix(got, "package artifact\n"), got)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestHealErrorQuotesTheAnswer(t *testing.T) {
	_, err := provider.Heal("I cannot do that.")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"I cannot do that."`)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// BenchmarkHeal measures healing a typical answer: prose, a usage snippet and the file.
func BenchmarkHeal(b *testing.B) {
	raw := "Here is the implementation.\n\n```go\n" + upper + "```\n\nUsage:\n```go\nfmt.Println(Upper(\"hi\"))\n```\n"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := provider.Heal(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzHeal checks that no answer makes Heal panic, and that what it returns is always one
// file with a package clause, or an ErrNoCode error.
func FuzzHeal(f *testing.F) {
	for _, s := range []string{
		"```go\n" + upper + "```", toolArgs(upper), upper, "```\n```", "```go", "{\"code\": 1}",
		"<think>```go\nx\n```</think>", "package main\nfunc", "~~~~\n~~~", "[{\"arguments\": \"{\\\"code\\\": \\\"func F() {}\\\"}\"}]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		code, err := provider.Heal(raw)
		if err != nil {
			if !errors.Is(err, provider.ErrNoCode) {
				t.Fatalf("error does not wrap ErrNoCode: %v", err)
			}
			return
		}
		if !strings.HasSuffix(code, "\n") || !strings.Contains(code, "package ") {
			t.Fatalf("healed code without a package clause or final newline: %q", code)
		}
	})
}

// BenchmarkHealLongUnfenced is the worst case: a long answer with no fence and many closing
// lines, where Heal must look for the code's end.
func BenchmarkHealLongUnfenced(b *testing.B) {
	raw := "func F() {\n" + strings.Repeat("}\n)\nnot go\n", 3000)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = provider.Heal(raw)
	}
}

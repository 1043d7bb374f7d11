package gen

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ErrNoCode is wrapped by Heal's error when an answer holds nothing that looks like Go.
var ErrNoCode = errors.New("no Go code found in answer")

// ArtifactPackage is the package clause every generated file must carry.
const ArtifactPackage = "artifact"

var (
	packageClause = regexp.MustCompile(`(?m)^[ \t]*package[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*;?[ \t]*(//.*)?$`)
	testFunc      = regexp.MustCompile(`(?m)^func\s+(Test|Benchmark|Fuzz)[A-Z0-9_]\w*\s*\(\s*\w+\s+\*testing\.`)
	thinkBlock    = regexp.MustCompile(`(?s)<(think|thinking|reasoning)>.*?</(think|thinking|reasoning)>`)
)

// Heal extracts one Go source file from a model's answer: the best fenced block (a parseable,
// non-test block tagged go or untagged, the largest when several qualify), else the code
// argument of a tool call ({"code": "..."}), else unfenced text that parses as Go. It drops
// reasoning blocks (<think>…</think>), normalizes line endings and rewrites any package clause
// to `package artifact` (adding one when missing). A go-tagged block that does not parse is
// still returned when nothing better exists, so the verification gate can feed the syntax
// error back to the model. When no code is found the error wraps ErrNoCode.
func Heal(raw string) (string, error) {
	return heal(raw, 0)
}

func heal(raw string, depth int) (string, error) {
	s := strings.TrimPrefix(raw, "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = thinkBlock.ReplaceAllString(s, "")
	trimmed := strings.TrimSpace(s)
	if trimmed == "" {
		return "", fmt.Errorf("%w: the answer is empty", ErrNoCode)
	}

	if depth < 3 && (trimmed[0] == '{' || trimmed[0] == '[') {
		if code, ok := codeFromJSON([]byte(trimmed), 0); ok {
			return heal(code, depth+1)
		}
	}

	if code, ok := bestFencedBlock(s); ok {
		return code, nil
	}

	if code, ok := unfenced(trimmed); ok {
		return code, nil
	}
	return "", fmt.Errorf("%w (%d chars): %s", ErrNoCode, len(raw), snippet(trimmed, 160))
}

// codeFromJSON finds a tool-call code argument: a "code" string anywhere in the value, looking
// inside "arguments" strings (OpenAI sends function arguments as a JSON string).
func codeFromJSON(data []byte, depth int) (string, bool) {
	if depth > 8 {
		return "", false
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return "", false
	}
	return codeFromValue(v, depth)
}

func codeFromValue(v any, depth int) (string, bool) {
	switch x := v.(type) {
	case map[string]any:
		if c, ok := x["code"].(string); ok && strings.TrimSpace(c) != "" {
			return c, true
		}
		if a, ok := x["arguments"].(string); ok {
			if c, ok := codeFromJSON([]byte(a), depth+1); ok {
				return c, true
			}
		}
		for _, k := range []string{"arguments", "input", "function", "tool_calls", "content", "message", "choices"} {
			if sub, ok := x[k]; ok {
				if c, ok := codeFromValue(sub, depth+1); ok {
					return c, true
				}
			}
		}
	case []any:
		for _, e := range x {
			if c, ok := codeFromValue(e, depth+1); ok {
				return c, true
			}
		}
	}
	return "", false
}

type block struct {
	lang   string
	body   string
	tagged bool // lang is go/golang
}

// fencedBlocks returns the ``` or ~~~ blocks of s in order; an unclosed last fence runs to the
// end (answers cut off by a token limit).
func fencedBlocks(s string) []block {
	var out []block
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		fence, info, ok := openFence(lines[i])
		if !ok {
			continue
		}
		var body []string
		j := i + 1
		for ; j < len(lines); j++ {
			if closesFence(lines[j], fence) {
				break
			}
			body = append(body, lines[j])
		}
		lang := strings.ToLower(strings.Trim(strings.Fields(info + " x")[0], "{}."))
		if info == "" {
			lang = ""
		}
		out = append(out, block{lang: lang, body: strings.Join(body, "\n"), tagged: lang == "go" || lang == "golang"})
		i = j
	}
	return out
}

func openFence(line string) (fence, info string, ok bool) {
	// Any indentation: models indent fences inside list items deeper than Markdown allows.
	t := strings.TrimLeft(line, " \t")
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(t) && t[n] == c {
			n++
		}
		if n >= 3 {
			info = strings.TrimSpace(t[n:])
			if c == '`' && strings.Contains(info, "`") {
				return "", "", false
			}
			return t[:n], info, true
		}
	}
	return "", "", false
}

func closesFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	if len(t) < len(fence) || t[0] != fence[0] {
		return false
	}
	return strings.Trim(t, fence[:1]) == ""
}

// bestFencedBlock ranks the go-tagged and untagged blocks: parseable non-test code first, then
// tagged non-test code, then parseable test code, then any tagged block; the largest wins a tie.
func bestFencedBlock(s string) (string, bool) {
	code, rank := bestBlock(fencedBlocks(s), 0)
	return code, rank > 0
}

func bestBlock(blocks []block, depth int) (string, int) {
	best, bestRank, bestSize := "", 0, -1
	for _, b := range blocks {
		if (b.lang == "markdown" || b.lang == "md") && depth < 2 {
			// An answer wrapped whole in a markdown fence: look inside it.
			if code, rank := bestBlock(fencedBlocks(b.body), depth+1); rank > bestRank || (rank == bestRank && rank > 0 && len(code) > bestSize) {
				best, bestRank, bestSize = code, rank, len(code)
			}
			continue
		}
		if !b.tagged && b.lang != "" {
			continue
		}
		code := normalizePackage(b.body)
		if strings.TrimSpace(b.body) == "" {
			continue
		}
		parses := parsesAsGo(code)
		test := isTestCode(code)
		rank := 0
		switch {
		case parses && !test:
			rank = 4
		case b.tagged && !test:
			rank = 3
		case parses:
			rank = 2
		case b.tagged:
			rank = 1
		}
		if rank == 0 {
			continue
		}
		if rank > bestRank || (rank == bestRank && len(code) > bestSize) {
			best, bestRank, bestSize = code, rank, len(code)
		}
	}
	return best, bestRank
}

const maxUnfencedTries = 8

// unfenced accepts text without fences when it, or its part from the first package/import/func
// line to the last closing brace, parses as Go.
func unfenced(s string) (string, bool) {
	if code := normalizePackage(s); parsesAsGo(code) {
		return code, true
	}
	lines := strings.Split(s, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "package ") || strings.HasPrefix(l, "import ") || strings.HasPrefix(l, "func ") ||
			(strings.HasPrefix(l, "// ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "func ")) {
			start = i
			break
		}
	}
	if start < 0 {
		return "", false
	}
	// Trailing prose is short: try the last few closing lines only, so a long answer cannot make
	// this quadratic.
	tries := 0
	for end := len(lines); end > start && tries < maxUnfencedTries; end-- {
		if !strings.HasPrefix(lines[end-1], "}") && !strings.HasPrefix(lines[end-1], ")") {
			continue
		}
		tries++
		if code := normalizePackage(strings.Join(lines[start:end], "\n")); parsesAsGo(code) {
			return code, true
		}
	}
	return "", false
}

// normalizePackage rewrites the first package clause to `package artifact` (keeping _test
// packages as they are) or adds one, and ends the file with a newline.
func normalizePackage(code string) string {
	code = strings.TrimSpace(code)
	if code == "" {
		return ""
	}
	if loc := packageClause.FindStringSubmatchIndex(code); loc != nil {
		name := code[loc[2]:loc[3]]
		if name != ArtifactPackage && !strings.HasSuffix(name, "_test") {
			code = code[:loc[0]] + "package " + ArtifactPackage + code[loc[3]:]
		}
		return code + "\n"
	}
	return "package " + ArtifactPackage + "\n\n" + code + "\n"
}

func parsesAsGo(code string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), "artifact.go", code, parser.SkipObjectResolution)
	return err == nil && len(f.Decls) > 0
}

func isTestCode(code string) bool {
	if m := packageClause.FindStringSubmatch(code); m != nil && strings.HasSuffix(m[1], "_test") {
		return true
	}
	return testFunc.MatchString(code)
}

func snippet(s string, n int) string {
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}

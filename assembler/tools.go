package assembler

import (
	"fmt"
	"go/scanner"
	"go/token"
	"math"
	"sort"
	"strings"
	"time"
)

// Tool is a persisted method another role's code may delegate to with host.Call.
type Tool struct {
	Role, Method, Decl string
	Purpose            string
	Successes          int64
	Failures           int64 // intrinsic and adaptive only: extrinsic failures are the world's, not the code's
	LastUsed           time.Time
}

// ToolHalfLife is the age at which a tool's recency weight halves.
const ToolHalfLife = 7 * 24 * time.Hour

// Score is success_rate × recency_decay.
func (t Tool) Score(now time.Time) float64 {
	n := t.Successes + t.Failures
	if n == 0 || t.Successes == 0 {
		return 0
	}
	rate := float64(t.Successes) / float64(n)
	age := now.Sub(t.LastUsed)
	if age < 0 || t.LastUsed.IsZero() {
		age = 0
	}
	return rate * math.Exp2(-float64(age)/float64(ToolHalfLife))
}

// RankTools returns at most limit tools with a positive score, best first (ties: by name, so the
// part is byte-stable).
func RankTools(tools []Tool, now time.Time, limit int) []Tool {
	type scored struct {
		t Tool
		s float64
	}
	var out []scored
	for _, t := range tools {
		if s := t.Score(now); s > 0 {
			out = append(out, scored{t, s})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].s != out[j].s {
			return out[i].s > out[j].s
		}
		return out[i].t.Role+"."+out[i].t.Method < out[j].t.Role+"."+out[j].t.Method
	})
	if len(out) > limit {
		out = out[:limit]
	}
	ts := make([]Tool, len(out))
	for i, s := range out {
		ts[i] = s.t
	}
	return ts
}

// ToolsPart renders ranked tools as a prompt part: full lists each with its declaration and
// purpose, summary the declarations, index the names.
func ToolsPart(tools []Tool, priority int) Part {
	if len(tools) == 0 {
		return Part{Name: "known tools", Priority: priority}
	}
	head := "## Known tools\n\nExisting methods your code may call with host.Call(role, method, args) instead of rewriting them:\n\n"
	var full, sum, idx strings.Builder
	full.WriteString(head)
	sum.WriteString(head)
	idx.WriteString("## Known tools (names only)\n\n")
	for _, t := range tools {
		decl := SafeDecl(t.Decl)
		fmt.Fprintf(&full, "- %s.%s: %s — %s\n", t.Role, t.Method, decl, strings.Join(strings.Fields(t.Purpose), " "))
		fmt.Fprintf(&sum, "- %s.%s: %s\n", t.Role, t.Method, decl)
		fmt.Fprintf(&idx, "%s.%s ", t.Role, t.Method)
	}
	full.WriteString("\n")
	sum.WriteString("\n")
	idx.WriteString("\n\n")
	return Part{Name: "known tools", Priority: priority, Full: full.String(), Summary: sum.String(), Index: idx.String()}
}

// MaxDeclBytes bounds a known tool's declaration in a prompt.
const MaxDeclBytes = 300

// declWithheld stands for a declaration that is not shown.
const declWithheld = "(declaration not shown: it holds literal text or is too long; call the method with the args its contract names)"

// SafeDecl is a tool's declaration as a prompt may carry it to another role: the declaration is
// taken from model-written code, and a type can hold text (a struct tag, a comment, an array
// length written as a string's len), which another role's prompt would then show next to
// instructions. Only identifiers, keywords, operators and integer literals pass, within
// MaxDeclBytes; any other declaration is withheld (issue 22 item 1, a sibling route).
func SafeDecl(decl string) string {
	if len(decl) > MaxDeclBytes || strings.TrimSpace(decl) == "" {
		return declWithheld
	}
	fset := token.NewFileSet()
	var s scanner.Scanner
	bad := false
	s.Init(fset.AddFile("", -1, len(decl)), []byte(decl), func(token.Position, string) { bad = true }, scanner.ScanComments)
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		switch {
		case tok == token.IDENT:
			if !asciiIdent(lit) {
				return declWithheld
			}
		case tok == token.INT, tok.IsOperator(), tok.IsKeyword():
		case tok == token.SEMICOLON && lit == "\n": // the automatic one at the end
		default: // strings, runes, comments, floats
			return declWithheld
		}
	}
	if bad {
		return declWithheld
	}
	return decl
}

func asciiIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

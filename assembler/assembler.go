// Package assembler builds every prompt forge sends from parts, each with a priority and a
// fidelity (full, summary, index, archive), under a per-model token ceiling.
//
// Stable parts (the system rules, the host API) come first and are never demoted, so the prefix
// is byte-identical from one call to the next and provider prompt caches hit; volatile parts
// (contract, examples, known tools, recalled lessons, failure feedback, code) follow in the
// caller's order. When the estimate is over the ceiling, the lowest-priority demotable part is
// demoted one step (full -> summary -> index -> archive), again and again; if the parts that
// must be sent still do not fit, the prompt falls back once to the minimal parts (the contract
// and the failure: panic mode); if even that does not fit, Assemble fails with a
// *TooLargeError carrying the numbers.
//
// Tokens are estimated as ceil(chars / divisor); a Calibrator learns the divisor of each model
// from the input tokens providers report, so the estimate converges on the truth.
package assembler

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Fidelity is how much of a part is sent.
type Fidelity int

// Fidelities, from most to least.
const (
	Full Fidelity = iota
	Summary
	Index
	Archive // not sent
)

func (f Fidelity) String() string {
	switch f {
	case Full:
		return "full"
	case Summary:
		return "summary"
	case Index:
		return "index"
	}
	return "archive"
}

// MarshalText makes a Fidelity its name in JSON.
func (f Fidelity) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// Part is one piece of a prompt.
type Part struct {
	Name     string
	Priority int  // higher is kept longer
	Stable   bool // part of the cacheable prefix: first, never demoted
	Required bool // never demoted (it may still be dropped by panic mode unless Minimal)
	Minimal  bool // kept in the minimal prompt of panic mode
	// MinimalText is what the minimal prompt sends of a Minimal part ("": Full), e.g. a failure's
	// message without the failing code.
	MinimalText string
	Full        string
	Summary     string // "" : the head of Full, cut at a line within a quarter of its size
	Index       string // "" : the first line of Full
}

// text is the part at fidelity f.
func (p Part) text(f Fidelity) string {
	switch f {
	case Full:
		return p.Full
	case Summary:
		if p.Summary != "" {
			return p.Summary
		}
		return summarize(p.Full)
	case Index:
		if p.Index != "" {
			return p.Index
		}
		first, _, _ := strings.Cut(p.Full, "\n")
		return first + "\n"
	}
	return ""
}

func (p Part) minimal() string {
	if p.MinimalText != "" {
		return p.MinimalText
	}
	return p.Full
}

// summarize keeps the head of s: about a quarter, at least its first line, ending at a line.
func summarize(s string) string {
	if len(s) < 400 {
		first, rest, _ := strings.Cut(s, "\n")
		if rest == "" {
			return s
		}
		return first + "\n…\n"
	}
	n := len(s) / 4
	if i := strings.LastIndexByte(s[:n], '\n'); i > 0 {
		n = i + 1
	}
	return s[:n] + "…\n"
}

// Budget is the ceiling and the token estimate of one model.
type Budget struct {
	Ceiling int     // tokens the prompt (system and user parts) may take
	Divisor float64 // characters per token (default DefaultDivisor)
}

// DefaultDivisor is the characters-per-token estimate before any calibration.
const DefaultDivisor = 4.0

// Tokens estimates the tokens of n characters.
func (b Budget) Tokens(chars int) int {
	d := b.Divisor
	if d <= 0 {
		d = DefaultDivisor
	}
	if chars <= 0 {
		return 0
	}
	t := int(float64(chars)/d + 0.999999)
	return max(t, 1)
}

// PartReport is one part as assembled.
type PartReport struct {
	Name     string   `json:"name"`
	Fidelity Fidelity `json:"fidelity"`
	Tokens   int      `json:"tokens"`
	Stable   bool     `json:"stable,omitempty"`
}

// Prompt is an assembled prompt.
type Prompt struct {
	System  string       `json:"system"` // the stable parts, byte-identical across calls
	User    string       `json:"user"`   // the volatile parts, in order
	Parts   []PartReport `json:"parts"`
	Tokens  int          `json:"tokens"` // the estimate of System+User
	Ceiling int          `json:"ceiling"`
	Panic   bool         `json:"panic,omitempty"` // the minimal prompt was sent
}

// ErrTooLarge is wrapped by TooLargeError.
var ErrTooLarge = errors.New("context too large")

// TooLargeError is a prompt that does not fit even in its minimal form.
type TooLargeError struct {
	Needed, Ceiling int
	Parts           []PartReport // the minimal prompt's parts
}

func (e *TooLargeError) Error() string {
	var b strings.Builder
	for i, p := range e.Parts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", p.Name, p.Tokens)
	}
	return fmt.Sprintf("%v: the minimal prompt needs %d tokens, the model's ceiling is %d (parts: %s); "+
		"shorten the contract or raise the ceiling (FORGE_CONTEXT_TOKENS)", ErrTooLarge, e.Needed, e.Ceiling, b.String())
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// Assemble builds the prompt of parts under b (see the package comment).
func Assemble(parts []Part, b Budget) (Prompt, error) {
	if b.Ceiling <= 0 {
		return Prompt{}, fmt.Errorf("assembler: token ceiling %d: configure a positive ceiling", b.Ceiling)
	}
	order := make([]int, 0, len(parts))
	for i := range parts {
		if parts[i].Stable {
			order = append(order, i)
		}
	}
	for i := range parts {
		if !parts[i].Stable {
			order = append(order, i)
		}
	}
	fid := make([]Fidelity, len(parts))
	tok := make([]int, len(parts))
	total := 0
	for i, p := range parts {
		tok[i] = b.Tokens(len(p.text(Full)))
		total += tok[i]
	}
	// Demotion order: lowest priority first; on equal priority the later (more volatile) part.
	cands := make([]int, 0, len(parts))
	for i, p := range parts {
		if !p.Stable && !p.Required {
			cands = append(cands, i)
		}
	}
	sort.SliceStable(cands, func(x, y int) bool {
		a, c := parts[cands[x]], parts[cands[y]]
		if a.Priority != c.Priority {
			return a.Priority < c.Priority
		}
		return cands[x] > cands[y]
	})
	for _, i := range cands {
		for total > b.Ceiling && fid[i] < Archive {
			fid[i]++
			t := b.Tokens(len(parts[i].text(fid[i])))
			total += t - tok[i]
			tok[i] = t
		}
		if total <= b.Ceiling {
			break
		}
	}
	panicMode := false
	if total > b.Ceiling {
		// Panic mode: the minimal parts alone, in full.
		panicMode = true
		total = 0
		for i, p := range parts {
			if p.Minimal {
				fid[i], tok[i] = Full, b.Tokens(len(p.minimal()))
				total += tok[i]
			} else {
				fid[i], tok[i] = Archive, 0
			}
		}
		if total > b.Ceiling {
			e := &TooLargeError{Needed: total, Ceiling: b.Ceiling}
			for _, i := range order {
				if parts[i].Minimal {
					e.Parts = append(e.Parts, PartReport{Name: parts[i].Name, Fidelity: Full, Tokens: tok[i], Stable: parts[i].Stable})
				}
			}
			return Prompt{}, e
		}
	}
	out := Prompt{Ceiling: b.Ceiling, Panic: panicMode}
	var sys, user strings.Builder
	for _, i := range order {
		p := parts[i]
		out.Parts = append(out.Parts, PartReport{Name: p.Name, Fidelity: fid[i], Tokens: tok[i], Stable: p.Stable})
		if fid[i] == Archive {
			continue
		}
		txt := p.text(fid[i])
		if panicMode {
			txt = p.minimal()
		}
		if p.Stable {
			sys.WriteString(txt)
		} else {
			user.WriteString(txt)
		}
	}
	out.System, out.User = sys.String(), user.String()
	// The estimate of the whole, not the sum of rounded parts, is what the ceiling bounds.
	out.Tokens = b.Tokens(len(out.System) + len(out.User))
	return out, nil
}

package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/artifactforge/forge/internal/jsonval"
	"github.com/artifactforge/forge/registry"
)

// Diff (`forge diff`, HTTP GET .../diff, MCP forge_diff): what changes between two kept
// generations of an artifact, as code (a unified diff of their source, from the lineage) and as
// behaviour (the artifact's sample of real calls replayed on both, each input's two answers
// compared). Nothing is stored.

// ReplayNowFails: in a Diff, an input whose answer was a value and is now an error.
const ReplayNowFails ReplayKind = "now_fails"

// ClassifyAnswers compares the answer of generation From (was, wasErr) with generation To's (now,
// nowErr) on one input: same (equal values, or an error on both), now_succeeds, now_fails or
// changed.
func ClassifyAnswers(was json.RawMessage, wasErr string, now json.RawMessage, nowErr string) ReplayKind {
	wasOK, nowOK := wasErr == "", nowErr == ""
	switch {
	case !wasOK && !nowOK:
		return ReplaySame
	case wasOK && nowOK && jsonval.Equal(was, now):
		return ReplaySame
	case !wasOK:
		return ReplayNowSucceeds
	case !nowOK:
		return ReplayNowFails
	}
	return ReplayChanged
}

// DiffReport is what Forge.Diff found between generations From and To of role.method.
type DiffReport struct {
	Role   string `json:"role"`
	Method string `json:"method"`
	From   int    `json:"from"`
	To     int    `json:"to"`
	// Code is the unified diff of From's code to To's; empty when the code is the same.
	Code string `json:"code_diff"`
	// Sampled is how many inputs of the sample were replayed on both (Skipped of them could not
	// be judged: an outage, a deadline); NoSample says why none were.
	Sampled     int    `json:"sampled"`
	Skipped     int    `json:"skipped,omitempty"`
	Same        int    `json:"same"`
	Changed     int    `json:"changed"`
	NowSucceeds int    `json:"now_succeeds"`
	NowFails    int    `json:"now_fails"`
	NoSample    string `json:"no_sample,omitempty"`
	// Diffs are the inputs whose answers differ, with From's answer (Was) and To's (Now).
	Diffs    []ReplayDiff `json:"diffs,omitempty"`
	Duration int64        `json:"duration_ns"`
}

// Differs reports whether some sampled input's answer differs between the two generations.
func (d *DiffReport) Differs() bool { return d.Changed+d.NowSucceeds+d.NowFails > 0 }

// Summary is the behaviour diff in one line.
func (d *DiffReport) Summary() string {
	if d.NoSample != "" {
		return "no behaviour diff: " + d.NoSample
	}
	s := fmt.Sprintf("%d sampled input(s) replayed on gen-%d and gen-%d: %d same, %d changed, %d now succeed, %d now fail",
		d.Sampled, d.From, d.To, d.Same, d.Changed, d.NowSucceeds, d.NowFails)
	if d.Skipped > 0 {
		s += fmt.Sprintf(" (%d skipped: not the code's answer)", d.Skipped)
	}
	return s
}

// DiffGenerations resolves the generations a diff compares: to 0 is the current generation, from
// 0 the one before to. It refuses a pair that is not two distinct generations.
func DiffGenerations(current, from, to int) (int, int, error) {
	if from < 0 || to < 0 {
		return 0, 0, fmt.Errorf("generations %d and %d: a generation number is 1 or more (0 or none: the previous and the current one)", from, to)
	}
	if to == 0 {
		to = current
	}
	if from == 0 {
		from = to - 1
	}
	if from < 1 || to < 1 {
		return 0, 0, fmt.Errorf("gen-%d has no generation before it to compare with", to)
	}
	if from == to {
		return 0, 0, fmt.Errorf("gen-%d compared with itself: name two different generations", from)
	}
	return from, to, nil
}

// Diff compares generations from and to of role.method (0, 0: the previous and the current one)
// by code and by behaviour on the artifact's sample of real calls. Both generations must be kept
// in its history (registry.MaxHistory). Their code is compiled, not gated again.
func (f *Forge) Diff(ctx context.Context, role, method string, from, to int) (*DiffReport, error) {
	start := time.Now()
	rt, err := f.roleRuntime(role)
	if err != nil {
		return nil, err
	}
	if err := registry.ValidateName("method", method); err != nil {
		return nil, err
	}
	art, err := f.loadSampled(role, method)
	if err != nil {
		return nil, err
	}
	if from, to, err = DiffGenerations(art.Generation, from, to); err != nil {
		return nil, fmt.Errorf("forge: %s.%s: %w (it is at gen-%d)", role, method, err, art.Generation)
	}
	codeFrom, err := generationCode(art, from, "forge diff")
	if err != nil {
		return nil, err
	}
	codeTo, err := generationCode(art, to, "forge diff")
	if err != nil {
		return nil, err
	}
	d := &DiffReport{Role: role, Method: method, From: from, To: to,
		Code: UnifiedDiff(registry.GenerationID(from), registry.GenerationID(to), codeFrom, codeTo)}
	switch {
	case rt.rec.Sample != nil && rt.rec.Sample.Off:
		d.NoSample = "the role's contract turns the sample of real calls off"
	case len(art.Sample) == 0:
		d.NoSample = "the artifact keeps no sample of real calls yet (calls add to it as they run)"
	}
	if d.NoSample != "" {
		d.Duration = int64(time.Since(start))
		return d, nil
	}
	pFrom, err := f.compileKept(ctx, rt, role, method, codeFrom)
	if err != nil {
		return nil, err
	}
	defer pFrom.release()
	pTo, err := f.compileKept(ctx, rt, role, method, codeTo)
	if err != nil {
		return nil, err
	}
	defer pTo.release()
	c := &call{f: f, role: role, method: method, start: start, operator: true, rt: rt}
	for _, e := range art.Sample {
		e = e.Canonical()
		if ctx.Err() != nil {
			d.Skipped++
			continue
		}
		was, wasErr, ok, _ := c.answer(ctx, pFrom, e.Args)
		if !ok {
			d.Skipped++
			continue
		}
		now, nowErr, ok, _ := c.answer(ctx, pTo, e.Args)
		if !ok {
			d.Skipped++
			continue
		}
		d.Sampled++
		k := ClassifyAnswers(was, wasErr, now, nowErr)
		switch k {
		case ReplaySame:
			d.Same++
			continue
		case ReplayChanged:
			d.Changed++
		case ReplayNowSucceeds:
			d.NowSucceeds++
		case ReplayNowFails:
			d.NowFails++
		}
		d.Diffs = append(d.Diffs, ReplayDiff{Kind: k, Args: e.Args, Was: was, WasErr: wasErr, Now: now, NowErr: nowErr})
	}
	d.Sampled += d.Skipped
	d.Duration = int64(time.Since(start))
	return d, nil
}

// UnifiedDiff is the unified diff (3 lines of context) of a to b, labelled nameA and nameB; empty
// when they are equal. Lines are matched by a longest common subsequence: generated methods are
// small (the code size cap bounds them), so the quadratic table is cheap.
func UnifiedDiff(nameA, nameB, a, b string) string {
	if a == b {
		return ""
	}
	la, lb := splitLines(a), splitLines(b)
	// lcs[i][j]: length of the longest common subsequence of la[i:] and lb[j:].
	lcs := make([][]int, len(la)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(lb)+1)
	}
	for i := len(la) - 1; i >= 0; i-- {
		for j := len(lb) - 1; j >= 0; j-- {
			if la[i] == lb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte // ' ', '-', '+'
		text string
		ai   int // lines of a and b before this one
		bi   int
	}
	var ops []op
	i, j := 0, 0
	for i < len(la) || j < len(lb) {
		switch {
		case i < len(la) && j < len(lb) && la[i] == lb[j]:
			ops = append(ops, op{' ', la[i], i, j})
			i++
			j++
		case i < len(la) && (j == len(lb) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', la[i], i, j}) // deletions before insertions, as diff -u
			i++
		default:
			ops = append(ops, op{'+', lb[j], i, j})
			j++
		}
	}
	const ctxLines = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		// A hunk: from context lines before this change to context lines after the last change
		// that is within 2*ctxLines lines of the next one.
		lo := max(0, k-ctxLines)
		hi := k
		for hi < len(ops) {
			if ops[hi].kind != ' ' {
				hi++
				continue
			}
			n := hi
			for n < len(ops) && ops[n].kind == ' ' {
				n++
			}
			if n == len(ops) || n-hi > 2*ctxLines {
				hi = min(len(ops), hi+ctxLines)
				break
			}
			hi = n
		}
		na, nb := 0, 0
		for _, o := range ops[lo:hi] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(ops[lo].ai, na), hunkRange(ops[lo].bi, nb))
		for _, o := range ops[lo:hi] {
			out.WriteByte(o.kind)
			out.WriteString(o.text)
			out.WriteByte('\n')
		}
		k = hi
	}
	return out.String()
}

// hunkRange is a unified diff hunk's "start,count" (start is 1-based; an empty range names the
// line before it).
func hunkRange(before, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", before)
	}
	if n == 1 {
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"strings"
	"sync"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// This file holds the call path's part of the health rule (classifier.Attribute; RATIONALE,
// health): no single caller can move an artifact's health with its inputs.
//
//   - Args that alone exceed the role's caps are refused before anything runs (oversize).
//   - A failure on args the same code already failed on, and that counted, is the input's
//     (attribute): one input counts once. This process remembers the inputs each generation
//     failed on (inputLedger); the store remembers the last one, tagged in the recorded reason,
//     for the next process.
//   - A failure that the code a repair wrote fails on too is the input's when the persisted code's
//     other recent calls passed (inputSpecific): the code is not marked degraded.

// overArgs is the warm path's check: are the args larger than the role's memory cap, or than a
// delegated call's args may be? One comparison each; the failure is built by oversize.
func (c *call) overArgs(rt *roleRuntime) bool {
	n := len(c.args)
	return int64(n) > rt.limits.MemoryBytes || (n > sandbox.MaxCallArgsBytes && c.ev.Depth > 0)
}

// oversize is the caller failure of args that alone exceed the role's caps: nothing ran, nothing
// is recorded against the artifact.
func (c *call) oversize() *failure {
	n := len(c.args)
	what := fmt.Sprintf("role %s's memory cap of %s (limits.memory)", c.role, sandbox.FormatSize(c.rt.limits.MemoryBytes))
	fix := "send smaller args, or raise the role's limits.memory (up to the operator's maximum, FORGE_MAX_MEMORY)"
	if c.ev.Depth > 0 && n > sandbox.MaxCallArgsBytes {
		what = fmt.Sprintf("the %s cap on a delegated call's args", sandbox.FormatSize(sandbox.MaxCallArgsBytes))
		fix = "delegate smaller requests"
	}
	return &failure{typ: TypeArgs, result: classifier.Classify(classifier.Failure{Kind: classifier.KindArgsSize}),
		msg: fmt.Sprintf("args of %d bytes are larger than %s: the code could not even hold them, so nothing ran and the code's health is untouched; %s", n, what, fix)}
}

// inputTag is the fingerprint of args recorded with a failure that counted: "[input <hex>]".
// It is taken of the input the code gets, not of its spelling (registry.CanonicalInput, args by
// position named by the signature), so that one input cannot count again as {"b":0,"a":1}, [1,0],
// {"\u0061":1,...} or [1,-0].
func inputTag(args json.RawMessage, sig sandbox.Signature) string {
	names := make([]string, len(sig.Params))
	for i, p := range sig.Params {
		names[i] = p.Name
	}
	h := fnv.New64a()
	if v, err := registry.CanonicalInput(args, names); err == nil {
		args = v
	} else {
		var buf bytes.Buffer
		if json.Compact(&buf, args) == nil {
			args = buf.Bytes() // insignificant whitespace does not make another input
		}
	}
	_, _ = h.Write(args)
	return fmt.Sprintf("[input %016x]", h.Sum64())
}

// ledgerInputs is how many failing inputs a generation's ledger remembers (the newest ones).
const ledgerInputs = 32

// ledgerMax bounds the generations remembered; the ledger starts over when it is full.
const ledgerMax = 4096

// inputLedger remembers, per generation, the inputs whose failure counted toward its health. It
// is touched on failures only.
type inputLedger struct {
	mu sync.Mutex
	m  map[ledgerKey]*ledgerEntry
}

type ledgerKey struct {
	role, method string
	gen          int
}

type ledgerEntry struct {
	tags [ledgerInputs]string
	n    int // tags written; the newest is at (n-1) % ledgerInputs
}

func (l *inputLedger) has(k ledgerKey, tag string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.m[k]
	if e == nil {
		return false
	}
	for i := 0; i < min(e.n, ledgerInputs); i++ {
		if e.tags[i] == tag {
			return true
		}
	}
	return false
}

func (l *inputLedger) add(k ledgerKey, tag string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) >= ledgerMax {
		l.m = map[ledgerKey]*ledgerEntry{}
	}
	e := l.m[k]
	if e == nil {
		e = &ledgerEntry{}
		l.m[k] = e
	}
	e.tags[e.n%ledgerInputs] = tag
	e.n++
}

// covered reports whether an acceptance example of the method has args and expects a value for
// them: the contract says they must succeed.
func (c *call) covered(args json.RawMessage, sig sandbox.Signature) bool {
	acc := c.rt.rec.Acceptance
	if acc == nil {
		return false
	}
	want := normalArgs(args, sig)
	if want == nil {
		return false
	}
	for _, ex := range acc.Examples {
		if (ex.Method != "" && ex.Method != c.method) || ex.ExpectError != "" {
			continue
		}
		if got := normalArgs(ex.Args, sig); got != nil && reflect.DeepEqual(got, want) {
			return true
		}
	}
	return false
}

// attribute applies the health rule to a failure of art's code on this call's args: a repeat of
// an input that already counted against this generation is the input's (caller,
// input_repeated); a failure that counts is remembered (and tagged for the store).
func (c *call) attribute(ctx context.Context, fl *failure, art *registry.Artifact, sig sandbox.Signature) *failure {
	if fl == nil || !fl.result.Class.CountsTowardHealth() || art == nil || c.operator {
		return fl
	}
	tag := inputTag(c.args, sig)
	k := ledgerKey{c.role, c.method, art.Generation}
	// A tag is recorded only with a failure that counted, or a repeat of one (never with another
	// caller failure), so the store's last failure naming this input means it counted.
	known := c.f.inputs.has(k, tag)
	counted := known || strings.HasSuffix(art.LastFailureReason, tag)
	in := classifier.Input{Covered: c.covered(c.args, sig), Counted: counted, Delegates: c.rt.caps.Call}
	if !in.Covered && !in.Counted && !in.Delegates {
		in.SamplePasses = samplePasses(art)
	}
	var prevGen int
	var prevErr string
	if in.SamplePasses {
		prevGen, prevErr = c.previousFails(ctx, art)
		in.PreviousFails = prevErr != ""
	}
	r := classifier.Attribute(fl.result, in)
	if r.Rule == classifier.RuleInputPreviousFails {
		c.f.inputs.add(k, tag) // a repeat is the input's at once, with no run of the older code
		return &failure{typ: fl.typ, result: r, args: fl.args, input: tag,
			msg: fmt.Sprintf("%s (%s); generation %d of %s.%s fails on these args too (%s) while every input of the sample of real calls passes on generation %d: "+
				"the failure is the input's, not the code's, so the code's health is untouched and no repair is spent on it: change the args, or the role's contract (an acceptance example that says what these args must give)",
				fl.msg, fl.result, prevGen, c.role, c.method, prevErr, art.Generation)}
	}
	if r != fl.result {
		if !known {
			c.f.inputs.add(k, tag) // known to this process from now on (it came from the store)
		}
		return &failure{typ: fl.typ, result: r, args: fl.args, input: tag,
			msg: fmt.Sprintf("%s (%s); generation %d of %s.%s already failed on these args and that failure counted: one input counts once toward the code's health, "+
				"so this failure is the input's (no repair is spent on it): change the args, or the role's contract (its limits, or an acceptance example that says what these args must give)",
				fl.msg, fl.result, art.Generation, c.role, c.method)}
	}
	c.f.inputs.add(k, tag)
	fl.input = tag
	return fl
}

// inputSpecific applies the health rule when no code could be produced for this call: when the
// persisted code (base) failed on these args, code that passed the acceptance set failed on them
// too (onArgs), and base's other recent calls passed, the failure is the input's — base is not
// marked degraded, and a repeat of these args spends no more repairs. It returns nil when the
// failure stays the code's.
func (c *call) inputSpecific(base *registry.Artifact, onArgs *failure, n int) *failure {
	if base == nil || onArgs == nil || c.cause == nil || c.operator || !c.cause.result.Class.CountsTowardHealth() {
		return nil
	}
	others := !strings.ContainsAny(base.Recent, "ia") // before this call's own failure
	r := classifier.Attribute(c.cause.result, classifier.Input{OtherCodeFails: true, OthersPass: others, Delegates: c.rt.caps.Call})
	if r.Class.CountsTowardHealth() {
		return nil
	}
	tag := c.cause.input // the tag attribute took of these args, with the signature
	if tag == "" {
		tag = inputTag(c.args, sandbox.Signature{})
	}
	c.f.inputs.add(ledgerKey{c.role, c.method, base.Generation}, tag)
	return &failure{typ: c.cause.typ, result: r,
		msg: fmt.Sprintf("%s.%s fails on these args in every version that passes its acceptance set — generation %d (%s: %s) and %d generated one(s) (last: %s) — "+
			"while its other recent calls passed: the failure is the input's, not the code's, so the code's health is untouched. "+
			"Change the args, or the role's contract (its limits, or an acceptance example that says what these args must give)",
			c.role, c.method, base.Generation, c.cause.result, c.cause.msg, n, onArgs.msg)}
}

// samplePasses reports whether art's sample of real calls holds inputs of its current generation
// and every one of them got a value (blame: the inputs callers send pass).
func samplePasses(art *registry.Artifact) bool {
	n := 0
	for _, e := range art.Sample {
		if e.Gen != art.Generation {
			continue
		}
		if e.Err != "" {
			return false
		}
		n++
	}
	return n > 0
}

// previousFails runs the generation before art's, from its history, on this call's args: the
// generation and the message of its own failure, or "" when it answers, is not kept, or could
// not judge (an outage, a deadline). It runs on a failure only, once per failing input (the
// ledger remembers it).
func (c *call) previousFails(ctx context.Context, art *registry.Artifact) (int, string) {
	prev := art.Generation - 1
	code, err := generationCode(art, prev, "")
	if prev < 1 || err != nil || code == art.Code {
		return prev, ""
	}
	p, err := c.f.compileKept(ctx, c.rt, c.role, c.method, code)
	if err != nil {
		return prev, ""
	}
	defer p.release()
	_, msg, ok, _ := c.answer(ctx, p, c.args)
	if !ok {
		return prev, ""
	}
	return prev, msg
}

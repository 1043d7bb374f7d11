package forge

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/artifactforge/forge/assembler"
	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/repair"
	"github.com/artifactforge/forge/sandbox"
)

// Every prompt is assembled (package assembler) from parts: the stable system part (rules, host
// API, sandbox gaps) first, then the request's sections (task, contract, signature), the known
// tools, the recalled lessons, and the failure sections (the code that failed, earlier attempts),
// under the model's token ceiling.

// DefaultContextTokens is the ceiling of a provider that registered none of its own
// (provider.Registration.ContextTokens: command:, replay:, test providers);
// Options.ContextTokens overrides both.
const DefaultContextTokens = 32_000

// MaxKnownTools bounds the known tools listed in a prompt.
const MaxKnownTools = 20

// Part priorities: higher is demoted later. Task, contract and signature are never demoted.
const (
	prioFailed   = 90
	prioEarlier  = 50 // + the attempt's number: newer earlier attempts are kept longer
	prioLessons  = 40
	prioTools    = 30
	prioReplaced = 20
)

// RuleContextTooLarge classes a prompt that does not fit its model even in minimal form: the
// artifact is not at fault, so it is extrinsic and never counts against its health.
const RuleContextTooLarge classifier.Rule = "context_too_large"

// calibration is the token calibration of a forge, under the store's cache/.
type calibration struct {
	cal    *assembler.Calibrator
	mu     sync.Mutex
	models map[string]string // provider name -> the model it last reported
}

func (f *Forge) openCalibrator() error {
	c, err := assembler.OpenCalibrator(filepath.Join(cacheDir(f.store.LocalDir()), "tokens.json"))
	if err != nil {
		return err
	}
	f.calib = &calibration{cal: c, models: map[string]string{}}
	return nil
}

// budget is the ceiling and calibrated divisor for prov.
func (f *Forge) budget(prov provider.Provider) assembler.Budget {
	name := prov.Name()
	ceiling := f.opts.ContextTokens
	if ceiling <= 0 {
		if ceiling = provider.Lookup(name).ContextTokens; ceiling <= 0 {
			ceiling = DefaultContextTokens
		}
	}
	b := assembler.Budget{Ceiling: ceiling, Divisor: assembler.DefaultDivisor}
	if f.calib != nil {
		f.calib.mu.Lock()
		model := f.calib.models[name]
		f.calib.mu.Unlock()
		if model == "" {
			model = name
		}
		b.Divisor = f.calib.cal.Divisor(model)
	}
	return b
}

// observe feeds a provider's reported input tokens to the calibration.
func (f *Forge) observe(prov provider.Provider, chars int, ans provider.Answer) {
	if f.calib == nil || ans.Usage.InputTokens <= 0 {
		return
	}
	name := prov.Name()
	f.calib.cal.Observe(name, chars, ans.Usage.InputTokens)
	if ans.Model != "" && ans.Model != name {
		f.calib.cal.Observe(ans.Model, chars, ans.Usage.InputTokens)
		f.calib.mu.Lock()
		f.calib.models[name] = ans.Model
		f.calib.mu.Unlock()
	}
}

// promptParts splits a request into parts (each of its sections one part, byte for byte),
// with the known tools and lessons inserted after the signature.
func promptParts(system string, req repair.Request, tools, lessons assembler.Part) []assembler.Part {
	parts := []assembler.Part{{Name: "system", Stable: true, Full: system}}
	inserted := false
	insert := func() {
		if !inserted {
			inserted = true
			if tools.Full != "" {
				parts = append(parts, tools)
			}
			if lessons.Full != "" {
				parts = append(parts, lessons)
			}
		}
	}
	earlier := 0
	for _, sec := range req.Sections() { // the request's own cuts: a heading quoted in a fence is no section
		title, _, _ := strings.Cut(strings.TrimPrefix(sec, "## "), "\n")
		p := assembler.Part{Name: strings.ToLower(title), Full: sec}
		switch {
		case title == "Task" || title == "Contract" || title == "Signature":
			p.Required, p.Minimal, p.Priority = true, true, 100
		case title == "Code that failed":
			insert()
			p.Minimal, p.Priority, p.Name = true, prioFailed, "failure"
			p.Summary = withoutCode(sec)
			p.MinimalText = p.Summary
		case title == "Code being replaced":
			insert()
			p.Priority, p.Summary = prioReplaced, withoutCode(sec)
		case strings.HasPrefix(title, "Earlier attempt"):
			insert()
			earlier++
			p.Priority, p.Summary = prioEarlier+earlier, withoutCode(sec)
			p.Name = fmt.Sprintf("earlier attempt %d", earlier)
		default:
			p.Priority = prioEarlier
		}
		parts = append(parts, p)
	}
	if !inserted {
		// At the end, after a section that ends with a single newline: keep the blank line.
		for _, p := range []*assembler.Part{&tools, &lessons} {
			if p.Full != "" {
				p.Full = "\n" + p.Full
				if p.Summary != "" {
					p.Summary = "\n" + p.Summary
				}
				if p.Index != "" {
					p.Index = "\n" + p.Index
				}
			}
		}
		insert()
	}
	return parts
}

// codeFence is the opening line of a section's code block (repair.Fence: three or more backticks).
var codeFence = regexp.MustCompile("(?m)^(`{3,})go\n")

// withoutCode is a section without its fenced code block: the heading and the failure.
func withoutCode(sec string) string {
	m := codeFence.FindStringSubmatchIndex(sec)
	if m == nil {
		return sec
	}
	start, body, fence := m[0], m[1], sec[m[2]:m[3]]
	end := strings.Index(sec[body:], "\n"+fence+"\n")
	if end < 0 {
		if !strings.HasSuffix(sec, "\n"+fence) {
			return sec
		}
		end = len(sec) - body - len(fence) - 1
	}
	rest := strings.TrimLeft(sec[body+end+1+len(fence):], "\n")
	return sec[:start] + "(code omitted to fit the model's context)\n\n" + rest
}

// knownTools lists the persisted methods a role's code may delegate to (other roles' healthy
// artifacts), ranked and bounded.
func (f *Forge) knownTools(role string) []assembler.Tool {
	sums, err := f.store.Summaries() // the summary index, not every artifact file
	if err != nil {
		return nil
	}
	var tools []assembler.Tool
	for _, a := range sums {
		if a.Role == role || a.Err != nil {
			continue
		}
		if a.Lifecycle == registry.Quarantined || a.Lifecycle == registry.Archived {
			continue
		}
		t := assembler.Tool{Role: a.Role, Method: a.Method, Decl: a.Decl, Successes: a.SuccessCount,
			Failures: a.IntrinsicFailureCount + a.AdaptiveFailureCount}
		if a.LastUsedAt != nil {
			t.LastUsed = *a.LastUsedAt
		}
		if rec, err := f.store.Role(a.Role); err == nil && !rec.AgentDefined {
			t.Purpose = rec.Purpose // an agent's purpose is a caller's text: never another role's prompt
		}
		tools = append(tools, t)
	}
	return assembler.RankTools(tools, f.now(), MaxKnownTools)
}

// contextFailure is the failure of a prompt that does not fit.
func contextFailure(err error) *failure {
	var tl *assembler.TooLargeError
	if errors.As(err, &tl) {
		return &failure{typ: TypeContextTooLarge, result: classifier.Result{Class: classifier.Extrinsic, Rule: RuleContextTooLarge}, msg: err.Error()}
	}
	return &failure{typ: TypeInternal, result: classifier.Classify(classifier.Failure{Kind: classifier.KindInternal}), msg: err.Error()}
}

// PromptPreview is the prompt the next generation of role.method would send (with repair: the
// repair of its persisted code, with its last failure), as assembled for the configured provider:
// what the model will see, part by part (`forge prompt`). Nothing is sent and nothing is learned.
func (f *Forge) PromptPreview(role, method string, repairIt bool) (assembler.Prompt, error) {
	rt, err := f.roleRuntime(role)
	if err != nil {
		return assembler.Prompt{}, err
	}
	c := &call{f: f, rt: rt, role: role, method: method}
	sig := rt.declared(method)
	var req repair.Request
	if repairIt {
		art, err := f.store.Load(role, method)
		if err != nil {
			return assembler.Prompt{}, fmt.Errorf("forge: %s.%s has no persisted code to repair: %w", role, method, err)
		}
		class := classifier.Class(art.LastFailureClass)
		if class != classifier.Intrinsic && class != classifier.Adaptive {
			class = classifier.Intrinsic
		}
		msg := art.LastFailureReason
		if msg == "" {
			msg = "(no failure recorded: the preview shows where the failure goes)"
		}
		req = repair.NewRepair(role, method, rt.contract, sig, repair.Attempt{Code: art.Code, Error: msg, Result: classifier.Result{Class: class}})
	} else {
		req = repair.NewRegeneration(role, method, rt.contract, sig, repair.InitialForge(), repair.Attempt{})
	}
	if req.Signature == "" {
		req.Signature = "export func " + sandbox.ExportedName(method) + "(...) with parameters and results that fit the contract"
	}
	prov, err := f.providerOrErr()
	if err != nil {
		prov = previewProvider{}
	}
	kn := c.lessons(prov)
	if _, _, fl := kn.assemble(req); fl != nil {
		return assembler.Prompt{}, fl.toError()
	}
	return kn.last, nil
}

// previewProvider stands for an unconfigured provider in a preview: the default ceiling applies.
type previewProvider struct{ provider.Provider }

func (previewProvider) Name() string { return "none" }

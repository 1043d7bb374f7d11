package forge

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/artifactforge/forge/assembler"
	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/repair"
)

// The learner in the forge: a generation or repair prompt carries the lessons that match its
// contract and failure; a failure that a later answer of the same generation fixed (a successful
// repair) becomes a correction lesson in the role's domain, and also in learner.ForgeDomain when
// it is about the sandbox; lessons that were in the prompt of an answer that passed at the first
// attempt are confirmed.

// MaxLessonsInPrompt bounds the lessons recalled into one prompt.
const MaxLessonsInPrompt = 6

// maxLessonChars bounds one lesson's content.
const maxLessonChars = 400

// Learner is the forge's knowledge store, nil when learning is off (Options.NoLearning).
func (f *Forge) Learner() *learner.Store { return f.learn }

// openLayers opens the knowledge store and the token calibration. The knowledge is the store
// backend's documents when it keeps them (the fleet store), else the directory knowledge/ under
// the store's LocalDir, whose damaged domain files go to the store's quarantine when the store
// has one (a registry.Maintainer).
func (f *Forge) openLayers() error {
	if err := f.openCalibrator(); err != nil {
		return err
	}
	if f.opts.NoLearning {
		return nil
	}
	l, err := openKnowledge(f.store, learner.Options{})
	if err != nil {
		return err
	}
	f.learn = l
	return nil
}

// knowledgeStore is what opening the knowledge needs from a store: a subset of registry.Backend.
type knowledgeStore interface {
	LocalDir() string
	Knowledge() registry.Docs
}

// openKnowledge opens the learner on s's knowledge: s.Knowledge() when it is not nil, else the
// directory LocalDir()/knowledge with s's quarantine (when s is a registry.Maintainer).
func openKnowledge(s knowledgeStore, o learner.Options) (*learner.Store, error) {
	if d := s.Knowledge(); d != nil {
		return learner.OpenDocs(d, o)
	}
	o.Quarantine = knowledgeQuarantine(s)
	return learner.Open(s.LocalDir(), o)
}

// storeDocs is where s keeps its knowledge documents, as openKnowledge opens them:
// s.Knowledge(), or the directory LocalDir()/knowledge with s's quarantine.
func storeDocs(s knowledgeStore) registry.Docs {
	if d := s.Knowledge(); d != nil {
		return d
	}
	return learner.DirDocs(filepath.Join(s.LocalDir(), learner.Dir), knowledgeQuarantine(s))
}

// knowledgeQuarantine sets a damaged knowledge file aside in s's quarantine when s is a
// registry.Maintainer; nil otherwise.
func knowledgeQuarantine(s knowledgeStore) func(path string, why error) string {
	m, ok := s.(registry.Maintainer)
	if !ok {
		return nil
	}
	return func(path string, why error) string { return m.QuarantineFile(path, why).MovedTo }
}

// OpenKnowledge opens the learner on a store's knowledge as the forge does (see openKnowledge);
// the CLI's `forge knowledge` uses it.
func OpenKnowledge(s registry.Backend, o learner.Options) (*learner.Store, error) {
	return openKnowledge(s, o)
}

// closeLayers promotes this process's lessons (the reflector) and saves the calibration.
func (f *Forge) closeLayers() error {
	var errs []error
	if f.learn != nil {
		errs = append(errs, f.learn.Close())
	}
	if f.calib != nil {
		errs = append(errs, f.calib.cal.Save())
	}
	return errors.Join(errs...)
}

func (f *Forge) flushLayers() {
	if f.learn != nil {
		_, _ = f.learn.Flush()
	}
	if f.calib != nil {
		_ = f.calib.cal.Save()
	}
}

// lessons is the knowledge and assembly side of one generation (one call of generate).
type lessons struct {
	c        *call
	prov     provider.Provider
	attempts int
	recalled []learner.Hit // in the latest prompt
	chars    int           // of the latest prompt
	last     assembler.Prompt
}

func (c *call) lessons(prov provider.Provider) *lessons { return &lessons{c: c, prov: prov} }

// recall returns the lessons that match a request.
func (l *lessons) recall(req repair.Request) []learner.Hit {
	f := l.c.f
	if f.learn == nil {
		return nil
	}
	q := []string{req.Role, req.Method, req.Contract, req.Signature, req.Failed.Error}
	for _, a := range req.Earlier {
		q = append(q, a.Error)
	}
	hits, err := f.learn.Recall(learner.Query{Text: strings.Join(q, "\n"), Domains: []string{req.Role, learner.ForgeDomain}, Limit: MaxLessonsInPrompt})
	if err != nil {
		return nil
	}
	return hits
}

// assemble builds the system and user prompt of an attempt under the model's ceiling, with the
// lessons and known tools that fit, and counts the attempt.
func (l *lessons) assemble(req repair.Request) (system, user string, fl *failure) {
	l.attempts++
	f, c := l.c.f, l.c
	l.recalled = l.recall(req)
	var lessonPart assembler.Part
	if len(l.recalled) > 0 {
		lessonPart = assembler.Part{Name: "lessons", Priority: prioLessons, Full: renderLessons(l.recalled) + "\n"}
	}
	var toolPart assembler.Part
	if c.rt.caps.Call {
		toolPart = assembler.ToolsPart(f.knownTools(c.role), prioTools)
	}
	p, err := assembler.Assemble(promptParts(systemPrompt(c.rt.backend), req, toolPart, lessonPart), f.budget(l.prov))
	if err != nil {
		return "", "", contextFailure(err)
	}
	for _, pr := range p.Parts {
		if pr.Name == "lessons" && pr.Fidelity == assembler.Archive {
			l.recalled = nil // not sent: nothing to confirm
		}
	}
	l.last, l.chars = p, len(p.System)+len(p.User)
	c.ev.PromptTokensEstimate += p.Tokens
	return p.System, p.User, nil
}

// answered feeds the provider's reported usage to the calibration.
func (l *lessons) answered(ans provider.Answer) { l.c.f.observe(l.prov, l.chars, ans) }

// renderLessons is the prompt section of recalled lessons.
func renderLessons(hits []learner.Hit) string {
	var b strings.Builder
	b.WriteString("## Lessons from earlier generations\n\n")
	b.WriteString("These were learned the hard way by this forge; follow them.\n\n")
	for _, h := range hits {
		fmt.Fprintf(&b, "- %s (%s, confidence %.1f)\n", h.Content, h.Category, h.Confidence)
	}
	return b.String()
}

// passed is told that the answer of the latest attempt passed the gate and was kept. The
// failures it fixed become lessons; the lessons of a first-attempt pass are confirmed.
func (l *lessons) passed(req repair.Request) {
	f := l.c.f
	if f.learn == nil {
		return
	}
	if l.attempts == 1 {
		for _, h := range l.recalled {
			// A lesson noted in this session and not yet promoted is not on disk: nothing to confirm.
			_, _ = f.learn.Confirm(h.Domain, h.Content)
		}
	}
	fixed := req.Earlier
	if req.IsRepair() {
		fixed = append([]repair.Attempt{req.Failed}, fixed...)
	}
	for _, a := range fixed {
		content, ok := lessonOf(a)
		if !ok {
			continue
		}
		e := learner.Entry{Content: content, Category: learner.Correction, Domain: req.Role,
			Reasoning: fmt.Sprintf("%s.%s failed this way and a later answer fixed it", req.Role, req.Method)}
		_ = f.learn.Note(e)
		if aboutSandbox(a) {
			e.Domain = learner.ForgeDomain
			_ = f.learn.Note(e)
		}
	}
}

// lessonRules are the failures that teach something about writing code; the others (a contract
// that changed, a budget, the outside world) do not.
var lessonRules = map[classifier.Rule]bool{
	classifier.RuleCompile: true, classifier.RulePolicy: true, classifier.RulePanic: true,
	classifier.RuleAcceptance: true, classifier.RuleResultEncode: true, classifier.RuleDeliverable: true,
	classifier.RuleReturned: true, classifier.RuleMemoryCap: true, classifier.RuleOutputCap: true,
	classifier.RuleDeadlineCompute: true,
}

// positions are file:line:col and "line N:" prefixes, which differ from one answer to the next.
var positions = regexp.MustCompile(`(?m)(^|\s)([\w./-]*\.go:\d+(:\d+)?:?|line \d+(:\d+)?:)\s*`)

// lessonOf is the lesson content of a fixed failure: "<class>/<rule>: <message>", without source
// positions, clipped.
func lessonOf(a repair.Attempt) (string, bool) {
	if !lessonRules[a.Result.Rule] {
		return "", false
	}
	msg := strings.Join(strings.Fields(positions.ReplaceAllString(a.Error, " ")), " ")
	if msg == "" {
		return "", false
	}
	if len(msg) > maxLessonChars {
		cut := maxLessonChars
		for cut > 0 && msg[cut]&0xC0 == 0x80 {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return fmt.Sprintf("%s/%s: %s", a.Result.Class, a.Result.Rule, msg), true
}

// aboutSandbox reports whether a failure is about forge's sandbox rather than the role: a policy
// refusal (a package, a symbol, a statement), which every role would hit the same way.
func aboutSandbox(a repair.Attempt) bool {
	if a.Result.Rule == classifier.RulePolicy {
		return true
	}
	m := strings.ToLower(a.Error)
	return a.Result.Rule == classifier.RuleCompile && (strings.Contains(m, "refused") || strings.Contains(m, "not allowed") || strings.Contains(m, "use host."))
}

package forge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/registry"
)

// Knowledge as tools (issue 24 item 5): agents recall lessons, record their own and confirm the
// ones that helped, through Recall, Record and Confirm (the MCP tools forge_recall, forge_record,
// forge_confirm and /v1/knowledge are thin edges over them). The client the context names
// (ClientFrom) is the lesson's provenance, and the roles it may use (WithClientRoles) its scope:
// a lesson an agent records reaches only the prompts of those roles (mayReach), and an agent
// recalls and confirms only lessons that may reach a role it may use.

type clientRolesKey struct{}

// WithClientRoles returns ctx saying which roles its client may use ("*" among them: every role).
// A context that says nothing is a client of every role: a server without client identities, or
// an embedding program.
func WithClientRoles(ctx context.Context, roles []string) context.Context {
	return context.WithValue(ctx, clientRolesKey{}, slices.Clone(roles))
}

// clientRoles is the roles ctx's client may use, ["*"] when ctx does not say.
func clientRoles(ctx context.Context) []string {
	if r, ok := ctx.Value(clientRolesKey{}).([]string); ok {
		return r
	}
	return []string{"*"}
}

// KnowledgeError is a refused or failed knowledge request; Kind says which (invalid, refused,
// not_found, off), for the edges' status codes.
type KnowledgeError struct {
	Kind string
	Msg  string
}

func (e *KnowledgeError) Error() string { return e.Msg }

func knowledgeErr(kind, format string, args ...any) error {
	return &KnowledgeError{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// RecallRequest is an agent's recall.
type RecallRequest struct {
	Query         string  `json:"query"`
	Domain        string  `json:"domain,omitempty"` // a role, "forge", or "" for every domain the client may read
	MinConfidence float64 `json:"min_confidence,omitempty"`
	Limit         int     `json:"limit,omitempty"` // default learner.DefaultLimit
}

// RecordRequest is a lesson an agent records.
type RecordRequest struct {
	Content   string `json:"content"`
	Reasoning string `json:"reasoning,omitempty"`
	Category  string `json:"category,omitempty"` // fact, preference, pattern (default) or correction
	Domain    string `json:"domain"`             // a role the client may use, or "forge"
}

// Lesson is a lesson as an agent sees it.
type Lesson struct {
	Content    string           `json:"content"`
	Reasoning  string           `json:"reasoning,omitempty"`
	Category   learner.Category `json:"category"`
	Domain     string           `json:"domain"`
	Confidence float64          `json:"confidence"`
	Provenance Provenance       `json:"provenance"`
	Score      float64          `json:"score,omitempty"`
}

// Provenance says who wrote a lesson: source operator, forge (Role: the role whose failure taught
// it) or agent (Client, and the roles it may reach).
type Provenance struct {
	Source learner.Source `json:"source"`
	Role   string         `json:"role,omitempty"`
	Client string         `json:"client,omitempty"`
	Roles  []string       `json:"roles,omitempty"`
}

func lessonOfEntry(e learner.Entry, score float64) Lesson {
	return Lesson{Content: e.Content, Reasoning: e.Reasoning, Category: e.Category, Domain: e.Domain, Confidence: e.Confidence, Score: score,
		Provenance: Provenance{Source: e.Provenance(), Role: e.Role, Client: e.Client, Roles: e.Scope}}
}

// knowledgeFor returns the learner and the client's roles, or why the request cannot be served.
func (f *Forge) knowledgeFor(ctx context.Context) (*learner.Store, []string, error) {
	if f.learn == nil {
		return nil, nil, knowledgeErr(KnowledgeOff, "learning is off on this forge (FORGE_LEARNING=off): there is no knowledge to recall or record")
	}
	return f.learn, clientRoles(ctx), nil
}

// mayUse reports whether a client of roles may use role.
func mayUse(roles []string, role string) bool {
	return slices.Contains(roles, "*") || slices.Contains(roles, role)
}

// domainFor checks a domain a client names: "forge", or a role it may use.
func domainFor(ctx context.Context, roles []string, domain string) (string, error) {
	d := strings.TrimSpace(domain)
	switch {
	case d == "":
		return "", knowledgeErr(KnowledgeInvalid, "name a domain: a role the client may use, or %q for lessons about the sandbox", learner.ForgeDomain)
	case strings.EqualFold(d, learner.ForgeDomain):
		return learner.ForgeDomain, nil
	}
	if err := registry.ValidateName("role", d); err != nil {
		return "", knowledgeErr(KnowledgeInvalid, "domain %q: %v; a domain is a role's name or %q", d, err, learner.ForgeDomain)
	}
	if !mayUse(roles, d) {
		return "", knowledgeErr(KnowledgeRefused, "client %s may not use role %s, so it may not read or write that role's lessons; ask the operator to add the role to the client", callerName(ctx), d)
	}
	return d, nil
}

func callerName(ctx context.Context) string {
	if c := ClientFrom(ctx); c != "" {
		return c
	}
	return "(anonymous)"
}

// visible reports whether a client of roles may read e: e may reach a prompt of one of its roles.
func visible(e *learner.Entry, roles []string) bool {
	if slices.Contains(roles, "*") {
		return e.Provenance() != learner.FromLegacy && (e.Provenance() != learner.FromAgent || len(e.Scope) > 0)
	}
	for _, r := range roles {
		if mayReach(e, r) && (e.Domain == learner.ForgeDomain || strings.EqualFold(e.Domain, r)) {
			return true
		}
	}
	return false
}

// Recall returns the lessons most relevant to the query that the context's client may read, with
// their provenance; it confirms nothing (Confirm does, when the agent says a lesson helped).
func (f *Forge) Recall(ctx context.Context, q RecallRequest) ([]Lesson, error) {
	l, roles, err := f.knowledgeFor(ctx)
	if err != nil {
		return nil, err
	}
	lq := learner.Query{Text: q.Query, MinConfidence: q.MinConfidence, Limit: q.Limit,
		Allow: func(e *learner.Entry) bool { return visible(e, roles) }}
	if q.MinConfidence < 0 || q.MinConfidence > 1 {
		return nil, knowledgeErr(KnowledgeInvalid, "min_confidence %v: use a number from 0 to 1", q.MinConfidence)
	}
	if strings.TrimSpace(q.Domain) != "" {
		d, err := domainFor(ctx, roles, q.Domain)
		if err != nil {
			return nil, err
		}
		lq.Domains = []string{d}
	} else if !slices.Contains(roles, "*") {
		lq.Domains = append([]string{learner.ForgeDomain}, roles...)
	}
	hits, err := l.Recall(lq)
	if err != nil {
		return nil, err
	}
	out := make([]Lesson, len(hits))
	for i, h := range hits {
		out[i] = lessonOfEntry(h.Entry, h.Score)
	}
	return out, nil
}

// Record stores a lesson the context's client wrote, with the client as its provenance and the
// roles it may use as its scope: the lesson reaches only those roles' prompts, quoted under the
// client's name as a note (never as a rule). The same content already there is confirmed instead.
func (f *Forge) Record(ctx context.Context, r RecordRequest) (Lesson, bool, error) {
	l, roles, err := f.knowledgeFor(ctx)
	if err != nil {
		return Lesson{}, false, err
	}
	d, err := domainFor(ctx, roles, r.Domain)
	if err != nil {
		return Lesson{}, false, err
	}
	cat, err := learner.ParseCategory(r.Category)
	if err != nil {
		return Lesson{}, false, knowledgeErr(KnowledgeInvalid, "%v", err)
	}
	content := oneLine(r.Content)
	if content == "" {
		return Lesson{}, false, knowledgeErr(KnowledgeInvalid, "a lesson needs a content: the lesson itself, one or two sentences")
	}
	if c := l.Caps(); c.MaxLessonBytes > 0 && len(content)+len(r.Reasoning) > c.MaxLessonBytes {
		return Lesson{}, false, knowledgeErr(KnowledgeInvalid, "the lesson is %d bytes (content and reasoning), over the cap of %d per lesson: shorten it", len(content)+len(r.Reasoning), c.MaxLessonBytes)
	}
	scope := roles
	if d != learner.ForgeDomain {
		scope = []string{d} // a role's lesson reaches that role's prompts only
	} else if slices.Contains(roles, "*") {
		scope = []string{"*"}
	}
	e, created, err := l.Record(learner.Entry{Content: content, Reasoning: oneLine(r.Reasoning), Category: cat, Domain: d,
		Source: learner.FromAgent, Client: ClientFrom(ctx), Scope: slices.Clone(scope)})
	if err != nil {
		return Lesson{}, false, err
	}
	return lessonOfEntry(e, 0), created, nil
}

// Confirm raises the confidence of a lesson (content matches in any case) that the context's
// client may read: the agent says it helped.
func (f *Forge) Confirm(ctx context.Context, domain, content string) (Lesson, error) {
	l, roles, err := f.knowledgeFor(ctx)
	if err != nil {
		return Lesson{}, err
	}
	d, err := domainFor(ctx, roles, domain)
	if err != nil {
		return Lesson{}, err
	}
	es, err := l.List(d)
	if err != nil {
		return Lesson{}, err
	}
	for i := range es {
		if strings.EqualFold(strings.TrimSpace(es[i].Content), strings.TrimSpace(content)) && visible(&es[i], roles) {
			e, err := l.ConfirmAs(d, es[i].Content, ClientFrom(ctx))
			if errors.Is(err, learner.ErrNotFound) {
				break
			}
			if errors.Is(err, learner.ErrCounted) {
				return lessonOfEntry(e, 0), knowledgeErr(KnowledgeRefused, "client %s recorded or already confirmed this lesson: its confidence counts each client once, so no client raises it alone; nothing changed", callerName(ctx))
			}
			if err != nil {
				return Lesson{}, err
			}
			return lessonOfEntry(e, 0), nil
		}
	}
	return Lesson{}, knowledgeErr(KnowledgeNotFound, "no lesson in domain %s with that content that client %s may read; recall them with forge_recall (GET /v1/knowledge)", d, callerName(ctx))
}

package learner

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Category says what kind of lesson an entry is.
type Category string

// The categories of an entry.
const (
	Fact       Category = "fact"
	Preference Category = "preference"
	Pattern    Category = "pattern"
	Correction Category = "correction"
)

// Confidence bounds: a new entry starts at InitialConfidence; each confirmation adds
// ConfidenceStep, up to MaxConfidence.
const (
	InitialConfidence = 0.1
	ConfidenceStep    = 0.1
	MaxConfidence     = 1.0
)

// Source is who wrote a lesson: its provenance, which decides which prompts it may reach (see
// package forge).
type Source string

// The sources of a lesson.
const (
	// FromOperator: recorded by an operator (`forge knowledge record`): operator text.
	FromOperator Source = "operator"
	// FromForge: recorded by forge itself from a failure a later answer fixed, in forge's own
	// fixed wording plus names it validated (identifiers, import paths it knows); never quoted
	// model-written or caller-written text.
	FromForge Source = "forge"
	// FromAgent: recorded by a client (an agent, through forge_record or POST /v1/knowledge):
	// the client's text, which reaches only the prompts of the roles in its Scope.
	FromAgent Source = "agent"
	// FromLegacy: learned before lessons had a provenance. Such a lesson quotes failure text the
	// model wrote, so it is listed but never recalled into a prompt.
	FromLegacy Source = "legacy"
)

// trust orders sources: a lesson recorded again from a more trusted source takes that
// provenance (its content is then the more trusted writer's too).
func (s Source) trust() int {
	switch s {
	case FromOperator:
		return 3
	case FromForge:
		return 2
	case FromAgent:
		return 1
	}
	return 0
}

// Entry is one lesson.
type Entry struct {
	Content    string    `yaml:"content" json:"content"`
	Reasoning  string    `yaml:"reasoning,omitempty" json:"reasoning,omitempty"`
	Category   Category  `yaml:"category" json:"category"`
	Domain     string    `yaml:"domain" json:"domain"`
	Confidence float64   `yaml:"confidence" json:"confidence"`
	UseCount   int       `yaml:"use_count" json:"use_count"`
	CreatedAt  time.Time `yaml:"created_at" json:"created_at"`
	UpdatedAt  time.Time `yaml:"updated_at" json:"updated_at"`
	// Source is the provenance ("" in a file written before provenance: see Provenance).
	Source Source `yaml:"source,omitempty" json:"source,omitempty"`
	// Role is, for a lesson forge recorded, the role whose generation taught it.
	Role string `yaml:"role,omitempty" json:"role,omitempty"`
	// Client is who recorded it: the client's name for an agent's lesson (the operator's, when
	// known, for an operator's).
	Client string `yaml:"client,omitempty" json:"client,omitempty"`
	// Scope is, for an agent's lesson, the roles whose prompts it may reach: the roles its
	// client may use when it recorded it ("*": every role; empty: none).
	Scope []string `yaml:"scope,omitempty" json:"scope,omitempty"`
	// ConfirmedBy are the clients whose confirmations of this lesson counted (ConfirmAs): each
	// counts once, and the client that recorded an agent's lesson never, so that no single
	// client raises a lesson's confidence alone.
	ConfirmedBy []string `yaml:"confirmed_by,omitempty" json:"confirmed_by,omitempty"`
}

// legacyLearned is the content forge gave learned lessons before provenance:
// "<class>/<rule>: <failure message>", the message written by the model's code.
var legacyLearned = regexp.MustCompile(`^(intrinsic|adaptive|extrinsic)/[a-z_]+: `)

// Provenance is the entry's source; an entry stored without one is FromLegacy when it has the
// form of a lesson forge learned before provenance (it quotes model-written text), else an
// operator's (the only other writer then).
func (e Entry) Provenance() Source {
	switch e.Source {
	case FromOperator, FromForge, FromAgent, FromLegacy:
		return e.Source
	case "":
		if legacyLearned.MatchString(e.Content) {
			return FromLegacy
		}
		return FromOperator
	}
	return FromLegacy // a source this version does not know: trusted for nothing
}

// adopt gives have the provenance of e when e's source is more trusted (the same content
// recorded again by a more trusted writer).
func (have *Entry) adopt(e Entry) {
	if e.Provenance().trust() > have.Provenance().trust() {
		have.Source, have.Role, have.Client, have.Scope = e.Source, e.Role, e.Client, e.Scope
	}
}

// ParseCategory accepts a category name in any case.
func ParseCategory(s string) (Category, error) {
	switch c := Category(strings.ToLower(strings.TrimSpace(s))); c {
	case Fact, Preference, Pattern, Correction:
		return c, nil
	case "":
		return Pattern, nil
	}
	return "", fmt.Errorf("learner: unknown category %q: use fact, preference, pattern or correction", s)
}

// Confirm returns the entry with its confidence raised by ConfidenceStep (capped at
// MaxConfidence) and one more use; e is not changed.
func (e Entry) Confirm(now time.Time) Entry {
	e.Confidence = math.Min(MaxConfidence, round2(e.Confidence+ConfidenceStep))
	e.UseCount++
	e.UpdatedAt = now.UTC()
	return e
}

// counted reports whether client (an agent's; "" is the anonymous one) already counted for e: it
// recorded e as an agent's lesson, or confirmed it.
func (e *Entry) counted(client string) bool {
	return (e.Provenance() == FromAgent && e.Client == client) || slices.Contains(e.ConfirmedBy, client)
}

// confirmAs is Confirm by an agent's client, which counts once (false: it had, e is returned).
func (e Entry) confirmAs(now time.Time, client string) (Entry, bool) {
	if e.counted(client) {
		return e, false
	}
	e = e.Confirm(now)
	e.ConfirmedBy = append(slices.Clone(e.ConfirmedBy), client)
	return e, true
}

// round2 keeps confidences at two decimals, so that ten confirmations make exactly 1.0.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// sameContent is the duplicate rule: contents equal ignoring case and surrounding space.
func sameContent(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

// validate checks an entry before it is stored.
func (e *Entry) validate() error {
	e.Content = strings.TrimSpace(e.Content)
	if e.Content == "" {
		return fmt.Errorf("learner: an entry needs a content (the lesson itself)")
	}
	if _, err := DomainFile(e.Domain); err != nil {
		return err
	}
	c, err := ParseCategory(string(e.Category))
	if err != nil {
		return err
	}
	e.Category = c
	switch e.Source {
	case "", FromOperator, FromForge, FromAgent:
	default:
		return fmt.Errorf("learner: unknown lesson source %q: use operator, forge or agent", e.Source)
	}
	if e.Confidence <= 0 || math.IsNaN(e.Confidence) {
		e.Confidence = InitialConfidence
	}
	e.Confidence = math.Min(MaxConfidence, e.Confidence)
	return nil
}

// DomainFile is the file name of a domain: lower case, runs of spaces as one underscore, and any
// character other than a-z, 0-9, '_', '-' and '.' as '_' ("newsletter curation" ->
// "newsletter_curation.yaml").
func DomainFile(domain string) (string, error) {
	d := strings.ToLower(strings.TrimSpace(domain))
	if d == "" {
		return "", fmt.Errorf("learner: an entry needs a domain (a role name, or %q for lessons about the sandbox)", ForgeDomain)
	}
	var b strings.Builder
	space := false
	for _, r := range d {
		switch {
		case r == ' ' || r == '\t' || r == '\n':
			if !space {
				b.WriteByte('_')
			}
			space = true
			continue
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		space = false
	}
	name := b.String()
	if strings.Trim(name, ".") == "" {
		return "", fmt.Errorf("learner: domain %q has no usable file name: use letters or digits", domain)
	}
	return name + ".yaml", nil
}

// ForgeDomain holds lessons about forge's sandbox that every role's prompts recall.
const ForgeDomain = "forge"

package learner

import (
	"fmt"
	"math"
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

package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Lifecycle is where an artifact stands with the forge and its operators.
type Lifecycle string

// Lifecycle states. Only candidate, durable, blessed and degraded artifacts are ever executed.
const (
	Candidate   Lifecycle = "candidate"   // passed the gate, not yet proven by real calls
	Durable     Lifecycle = "durable"     // proven by successful calls
	Blessed     Lifecycle = "blessed"     // pinned by an operator: always executed, never auto-replaced
	Degraded    Lifecycle = "degraded"    // failing by intrinsic or adaptive failures
	Quarantined Lifecycle = "quarantined" // refused until an operator rolls back or regenerates
	Archived    Lifecycle = "archived"    // pruned; reversible
)

// Valid reports whether l is one of the known states.
func (l Lifecycle) Valid() bool {
	switch l {
	case Candidate, Durable, Blessed, Degraded, Quarantined, Archived:
		return true
	}
	return false
}

// MaxHistory is how many generations an artifact keeps with their code, so that rollback never
// needs the code generator.
const MaxHistory = 3

// RecentWindow is how many recent outcomes an artifact keeps for its recent failure rate.
const RecentWindow = 20

// Artifact is the persisted code of one role.method with everything needed to decide whether to
// run, repair or regenerate it.
type Artifact struct {
	SchemaVersion       int       `json:"schema_version"`
	Role                string    `json:"role"`
	Method              string    `json:"method_name"`
	ContractFingerprint string    `json:"contract_fingerprint"`
	PromptVersion       string    `json:"prompt_version,omitempty"`
	RuntimeVersion      string    `json:"runtime_version"`
	Model               string    `json:"model,omitempty"`
	Generation          int       `json:"generation"`
	Code                string    `json:"code"`
	CodeChecksum        string    `json:"code_checksum"`
	Signature           Signature `json:"signature"`
	Lifecycle           Lifecycle `json:"lifecycle"`
	// ForceRegenerate is set by an operator (`forge regen --next-call`): the next call regenerates.
	ForceRegenerate bool `json:"force_regenerate,omitempty"`

	Counters
	LastFailureReason     string `json:"last_failure_reason,omitempty"`
	LastFailureClass      string `json:"last_failure_class,omitempty"`
	RepairCountSinceRegen int    `json:"repair_count_since_regen"`

	CreatedAt      time.Time  `json:"created_at"`
	LastUsedAt     *time.Time `json:"last_used_at,omitempty"`
	LastRepairedAt *time.Time `json:"last_repaired_at,omitempty"`

	History []Generation `json:"history"`

	// Sample is a bounded sample of real calls the current generation answered (sample.go):
	// new code replays it before it is promoted (forge's safe regeneration).
	Sample []SampleEntry `json:"sample,omitempty"`

	// MetricsApplied stamps the metrics journal records this file holds: journal -> the highest
	// sequence folded in (see journal.go). A record above its journal's stamp is not in the file.
	MetricsApplied map[string]int64 `json:"metrics_applied,omitempty"`
}

// Counters are the call outcomes merged in by the Recorder.
type Counters struct {
	SuccessCount          int64   `json:"success_count"`
	FailureCount          int64   `json:"failure_count"`
	IntrinsicFailureCount int64   `json:"intrinsic_failure_count"`
	AdaptiveFailureCount  int64   `json:"adaptive_failure_count"`
	ExtrinsicFailureCount int64   `json:"extrinsic_failure_count"`
	CallerFailureCount    int64   `json:"caller_failure_count"`
	TotalDurationNanos    int64   `json:"total_duration_ns"`
	MaxDurationNanos      int64   `json:"max_duration_ns"`
	Recent                string  `json:"recent,omitempty"` // newest last: s=success i/a/e/c=failure class
	RecentFailureRate     float64 `json:"recent_failure_rate"`
}

// Signature is the method's Go signature as derived from its code.
type Signature struct {
	Func         string          `json:"func,omitempty"`
	Decl         string          `json:"decl,omitempty"` // e.g. "func Upper(s string) string"
	ParamsSchema json.RawMessage `json:"params_schema,omitempty"`
}

// Generation is one entry of an artifact's lineage, with its code.
type Generation struct {
	ID            string    `json:"id"` // gen-N
	ParentID      string    `json:"parent_id,omitempty"`
	Trigger       string    `json:"trigger"` // initial_forge | repair:<class> | regenerate:<reason> | operator:<verb>
	CodeChecksum  string    `json:"code_checksum"`
	Code          string    `json:"code"`
	Model         string    `json:"model,omitempty"`
	PromptVersion string    `json:"prompt_version,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	// Replay is what replaying the previous generation's sample on this code found, when it
	// was replayed before the promotion (forge's safe regeneration).
	Replay *ReplaySummary `json:"replay,omitempty"`
}

// Checksum is the sha256 of code, written "sha256:<hex>".
func Checksum(code string) string {
	sum := sha256.Sum256([]byte(code))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// GenerationID names generation n.
func GenerationID(n int) string { return fmt.Sprintf("gen-%d", n) }

// Promote makes code the current generation, pushes it onto the history (keeping MaxHistory) and
// resets what belonged to the previous code. The caller has verified the code.
func (a *Artifact) Promote(code, trigger, model, promptVersion string, now time.Time) {
	parent := ""
	if a.Generation > 0 {
		parent = GenerationID(a.Generation)
	}
	a.Generation++
	a.Code = code
	a.CodeChecksum = Checksum(code)
	a.Model = model
	a.PromptVersion = promptVersion
	a.RuntimeVersion = RuntimeVersion
	a.SchemaVersion = SchemaVersion
	a.ForceRegenerate = false
	// The recent window and the last failure judge the current code only (outcomes of the code
	// replaced here never reach them, however late they are flushed: see delta.applyTo).
	a.Recent, a.RecentFailureRate = "", 0
	a.LastFailureClass, a.LastFailureReason = "", ""
	if a.CreatedAt.IsZero() {
		a.CreatedAt = now
	}
	g := Generation{ID: GenerationID(a.Generation), ParentID: parent, Trigger: trigger,
		CodeChecksum: a.CodeChecksum, Code: code, Model: model, PromptVersion: promptVersion, CreatedAt: now}
	a.History = append([]Generation{g}, a.History...)
	if len(a.History) > MaxHistory {
		a.History = a.History[:MaxHistory]
	}
	a.Sample = nil // answers of the code it replaces (the caller may record the new code's)
}

// ErrNoGeneration is returned by Rollback when the requested generation is not kept.
var ErrNoGeneration = errors.New("generation not in history")

// Rollback makes an earlier generation's code current again as a new generation with trigger
// operator:rollback. gen 0 means the generation before the current one; the current generation
// itself lifts a quarantine and changes nothing else.
func (a *Artifact) Rollback(gen int, now time.Time) error {
	if gen == 0 {
		if a.Generation <= 1 {
			return fmt.Errorf("registry: %s.%s: %w: it has no generation before gen-%d; regenerate with `forge regen %s %s`",
				a.Role, a.Method, ErrNoGeneration, a.Generation, a.Role, a.Method)
		}
		gen = a.Generation - 1
	}
	id := GenerationID(gen)
	for _, g := range a.History {
		if g.ID == id {
			if gen == a.Generation {
				if a.Lifecycle == Quarantined {
					// Rolling back to the current generation lifts an operator's quarantine.
					a.Lifecycle = Durable
					return nil
				}
				return fmt.Errorf("registry: %s.%s is already at %s", a.Role, a.Method, id)
			}
			a.Promote(g.Code, "operator:rollback:"+id, g.Model, g.PromptVersion, now)
			a.Lifecycle = Durable
			a.RepairCountSinceRegen = 0
			return nil
		}
	}
	kept := make([]string, len(a.History))
	for i, g := range a.History {
		kept[i] = g.ID
	}
	return fmt.Errorf("registry: %s.%s: %w: %s (kept: %v); regenerate with `forge regen %s %s`",
		a.Role, a.Method, ErrNoGeneration, id, kept, a.Role, a.Method)
}

// ErrCorrupt marks a file that does not parse or whose code does not match its checksum.
var ErrCorrupt = errors.New("corrupt")

// ErrIncompatible marks a file written under another schema version.
var ErrIncompatible = errors.New("incompatible schema version")

// DecodeArtifact parses a stored artifact and verifies its integrity: it parses, names a valid role
// and method, carries a known lifecycle and its code matches code_checksum. Unknown fields are
// tolerated so that a minor release can add some.
func DecodeArtifact(data []byte) (*Artifact, error) {
	var a Artifact
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("%w: does not parse: %v", ErrCorrupt, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the artifact object", ErrCorrupt)
	}
	if a.SchemaVersion != SchemaVersion {
		return &a, fmt.Errorf("%w: schema_version %d, this forge reads %d", ErrIncompatible, a.SchemaVersion, SchemaVersion)
	}
	if err := ValidateName("role", a.Role); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := ValidateName("method", a.Method); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if !a.Lifecycle.Valid() {
		return nil, fmt.Errorf("%w: unknown lifecycle %q", ErrCorrupt, a.Lifecycle)
	}
	if a.CodeChecksum != Checksum(a.Code) {
		return nil, fmt.Errorf("%w: code does not match code_checksum %s", ErrCorrupt, a.CodeChecksum)
	}
	for _, g := range a.History {
		if g.CodeChecksum != Checksum(g.Code) {
			return nil, fmt.Errorf("%w: history %s: code does not match its checksum", ErrCorrupt, g.ID)
		}
	}
	return &a, nil
}

// Encode renders the artifact as it is stored.
func (a *Artifact) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

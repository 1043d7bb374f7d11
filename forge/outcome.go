package forge

import (
	"encoding/json"
	"time"

	"github.com/artifactforge/forge/provider"
)

// Outcome is the tolerant result of a call: it never panics and never returns a Go error, so an
// agent can branch on OK and read Err.Class to decide what to do next.
type Outcome struct {
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value,omitempty"`
	Err   *Error          `json:"error,omitempty"`
	Meta  Meta            `json:"meta"`
}

// Error says what went wrong, whose fault it is and whether retrying may help.
type Error struct {
	// Type is what failed: a sandbox kind (compile, panic, deadline, args, host, ...), or
	// unknown_role, refused, provider, gate, deliverable, store.
	Type string `json:"type"`
	// Class is intrinsic, extrinsic, adaptive or caller.
	Class string `json:"class"`
	// Rule is the classifier rule that fired.
	Rule      string `json:"rule,omitempty"`
	Message   string `json:"message"`
	Retriable bool   `json:"retriable"`
	// RetryAfter, when set, is how long the caller should wait before the same call may succeed
	// (a spent ModelCallLimit); the HTTP edge sends it as Retry-After.
	RetryAfter time.Duration `json:"retry_after,omitempty"`
}

func (e *Error) Error() string {
	return e.Class + "/" + e.Rule + ": " + e.Message
}

// Program sources: where the code that answered a call came from.
const (
	SourcePersisted   = "persisted"
	SourceGenerated   = "generated"
	SourceRepaired    = "repaired"
	SourceRegenerated = "regenerated"
)

// Meta describes how a call was served.
type Meta struct {
	ProgramSource string         `json:"program_source,omitempty"`
	ArtifactGen   int            `json:"artifact_gen,omitempty"`
	Duration      time.Duration  `json:"duration"`
	ProviderCalls int            `json:"provider_calls"`
	Tokens        provider.Usage `json:"tokens"`
	// Decision is the selector's action:reason for the call.
	Decision string `json:"decision,omitempty"`
	// RepairAttempted and RepairSucceeded report the repair path of this call.
	RepairAttempted bool     `json:"repair_attempted,omitempty"`
	RepairSucceeded bool     `json:"repair_succeeded,omitempty"`
	Logs            []string `json:"logs,omitempty"`
	// Joined: an operator's regeneration found another one under way (in this process or
	// another) and reports its result instead of starting its own.
	Joined bool `json:"joined,omitempty"`
	// Unchanged: the verified answer was byte-identical to the current code, so no generation
	// was added (ArtifactGen is the current one).
	Unchanged bool `json:"unchanged,omitempty"`
	// Replay is what replaying the sample of real calls on the new code found, when new code
	// was checked against it before promotion (shadow.go).
	Replay *Replay `json:"replay,omitempty"`
}

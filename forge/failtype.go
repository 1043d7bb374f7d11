package forge

import "github.com/artifactforge/forge/sandbox"

// Failure types: Error.Type and Event.FailureType. A failure inside the sandbox has its
// sandbox.Kind as type (compile, panic, deadline, args, host, ...); these are the others, and
// the sandbox kinds the forge itself reports. The edges (CLI exit codes, HTTP statuses, MCP)
// compare against these, never against the strings.
const (
	TypeUnknownRole     = "unknown_role"      // no such role: the caller's fault
	TypeUnknownMethod   = "unknown_method"    // the role declares no such method
	TypeRefused         = "refused"           // the forge would not run it (quarantine, policy, access)
	TypeProvider        = "provider"          // the code generator failed
	TypeGate            = "gate"              // no generated code passed the gate
	TypeDeliverable     = "deliverable"       // the result does not match the role's deliverable
	TypeAcceptance      = "acceptance"        // the code failed the contract's acceptance examples
	TypeContextTooLarge = "context_too_large" // the prompt does not fit the model's context
	TypeStore           = "store"             // the store could not be read or written
	TypeClosed          = "closed"            // the forge was closed
	TypeNotFound        = "not_found"         // an operator verb found nothing to act on
	TypeReplay          = "replay"            // new code answered sampled real calls differently
	TypeModelCalls      = "model_calls"       // the caller spent its model calls (ModelCallLimit)

	TypeCompile  = string(sandbox.KindCompile)
	TypeDeadline = string(sandbox.KindDeadline)
	TypeArgs     = string(sandbox.KindArgs)
	TypeInternal = string(sandbox.KindInternal)
)

// Kinds of KnowledgeError, for the edges' status codes.
const (
	KnowledgeInvalid  = "invalid"   // the request is malformed: say what to fix
	KnowledgeRefused  = "refused"   // the client may not use that domain
	KnowledgeNotFound = "not_found" // no such lesson the client may read
	KnowledgeOff      = "off"       // learning is off on this forge
)

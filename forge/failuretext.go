package forge

import (
	"context"

	"github.com/artifactforge/forge/registry"
)

// A failure's text is often the caller's input echoed back (`bad input "..."`, a panic that
// prints its argument, the check of the call's own args). The forge keeps it where one reader
// may see it all (the artifact's last failure reason, a generation's steps), so an edge that
// shows those to a client of the role shows it only what may be its own: another client's
// failure reaches it as its class and rule, without the text (see RATIONALE, "Red team, sixth
// pass"). The operator, and every caller of a forge without client identities (the client ""),
// read it all.

// withheldNote is said where a failure's text was withheld from a client.
const withheldNote = "; its text is withheld: it may hold another client's input, and the operator reads it"

// WithheldFailureReason replaces an artifact's last failure reason for a named client: which
// client's call failed is not recorded, so no client reads it.
const WithheldFailureReason = "withheld: a failure's text may hold the input of the client whose call failed; the class is last_failure_class, and the operator reads the text"

// FailureReasonFor is a stored failure reason as ctx's client (ClientFrom) may read it.
func FailureReasonFor(ctx context.Context, reason string) string {
	if reason == "" || ClientFrom(ctx) == "" {
		return reason
	}
	return WithheldFailureReason
}

// ArtifactFor is a, loaded for an edge that shows it to ctx's client, cut to what that client
// may read: its own sampled calls (SampleFor), no failure text (FailureReasonFor). The operator
// reads a as it is.
func ArtifactFor(ctx context.Context, a *registry.Artifact) *registry.Artifact {
	a.Sample = SampleFor(ctx, a.Sample)
	a.LastFailureReason = FailureReasonFor(ctx, a.LastFailureReason)
	return a
}

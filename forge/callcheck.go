package forge

import (
	"errors"
	"fmt"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/registry"
)

// roleFailure is the failure of a call (or an operator verb) whose role could not be resolved.
// A role that does not exist, or a name that cannot be one, is the caller's error; anything else
// (the store could not be read, its role record is damaged or unusable) is the forge's own
// (internal, like the same store failure while loading the artifact): one class for one cause,
// whichever path met it first.
func roleFailure(role string, err error) *failure {
	if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrInvalidName) {
		return &failure{typ: "unknown_role", result: classifier.Result{Class: classifier.Caller, Rule: classifier.RuleArgs}, msg: err.Error()}
	}
	return &failure{typ: "store", result: classifier.Classify(classifier.Failure{Kind: classifier.KindInternal}),
		msg: fmt.Sprintf("reading role %s from the store failed: %v; the call's args are not the cause: check the store with `forge doctor`, then call again", role, err)}
}

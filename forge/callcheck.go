package forge

import (
	"errors"
	"fmt"
	"strings"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// roleFailure is the failure of a call (or an operator verb) whose role could not be resolved.
// A role that does not exist, or a name that cannot be one, is the caller's error; anything else
// (the store could not be read, its role record is damaged or unusable) is the forge's own
// (internal, like the same store failure while loading the artifact): one class for one cause,
// whichever path met it first.
func roleFailure(role string, err error) *failure {
	if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrInvalidName) {
		return &failure{typ: TypeUnknownRole, result: classifier.Result{Class: classifier.Caller, Rule: classifier.RuleArgs}, msg: err.Error()}
	}
	return &failure{typ: TypeStore, result: classifier.Classify(classifier.Failure{Kind: classifier.KindInternal}),
		msg: fmt.Sprintf("reading role %s from the store failed: %v; the call's args are not the cause: check the store with `forge doctor`, then call again", role, err)}
}

// checkArgsFirst checks a call's args against the signature its role's contract declares for the
// method, before code is generated, repaired or regenerated for it: args that cannot fit the
// declared signature (a missing or unknown parameter, a null where its type has none, a value of
// another type or out of its type's range: the input schema) are the
// caller's error whatever code is written, so no provider call is spent first. With no declared
// signature the code's own signature checks them when the gate runs the call.
func (c *call) checkArgsFirst() *failure {
	decl := c.rt.declared(c.method)
	if decl == "" || c.operator || c.args == nil {
		return nil // nil args forge the code without a call to run (verify)
	}
	sig, err := sandbox.ParseSignature(sandbox.Source{Code: "package artifact\n" + strings.TrimSuffix(strings.TrimSpace(decl), "{") + " { panic(0) }"})
	if err != nil {
		return nil // the contract's declaration is checked when the role is added
	}
	if err := registry.CheckArgs(sig, c.args); err != nil {
		return classifyErr(err, false)
	}
	return nil
}

// needsArgs reports whether a call of sig needs args: it has a parameter that is not variadic.
func needsArgs(sig sandbox.Signature) bool {
	n := len(sig.Params)
	if sig.Variadic {
		n--
	}
	return n > 0
}

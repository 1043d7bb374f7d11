package classifier

import "fmt"

// Class is whose fault a failure was. It decides whether the failure counts toward the artifact's
// health and whether the forge repairs the code.
type Class string

// The four classes of DESIGN.md, Failure classification.
const (
	Intrinsic Class = "intrinsic" // the code is wrong: repair it, count it
	Extrinsic Class = "extrinsic" // the world failed: report it, never count it
	Adaptive  Class = "adaptive"  // upstream data drifted: repair it, count it apart
	Caller    Class = "caller"    // the arguments do not fit: the caller's fault, no health effect
)

// Classes lists every class, for exhaustive tests and validation.
var Classes = []Class{Intrinsic, Extrinsic, Adaptive, Caller}

// CountsTowardHealth reports whether a failure of this class may degrade an artifact. Only the
// artifact's own faults count: an outage or a bad argument says nothing about the code.
func (c Class) CountsTowardHealth() bool { return c == Intrinsic || c == Adaptive }

// Repairable reports whether changing the code can fix a failure of this class, so that the forge
// should spend a repair on it.
func (c Class) Repairable() bool { return c == Intrinsic || c == Adaptive }

// Valid reports whether c is one of the four classes.
func (c Class) Valid() bool {
	switch c {
	case Intrinsic, Extrinsic, Adaptive, Caller:
		return true
	}
	return false
}

// ParseClass reads a class as stored in artifacts and events.
func ParseClass(s string) (Class, error) {
	if c := Class(s); c.Valid() {
		return c, nil
	}
	return "", fmt.Errorf("classifier: unknown class %q (want intrinsic, extrinsic, adaptive or caller)", s)
}

// Kind is what failed, as the sandbox (sandbox.Error.Kind) or the call path reports it.
type Kind string

// Failure kinds. The first twelve mirror sandbox.Kind; KindDeliverable and KindProvider are
// reported by the forge call path.
const (
	KindCompile     Kind = "compile"     // parse or type error
	KindPolicy      Kind = "policy"      // sandbox policy violation (import, directive, host not allowed)
	KindPanic       Kind = "panic"       // runtime panic: nil, index, conversion, divide
	KindDeadline    Kind = "deadline"    // the call's deadline passed
	KindDepth       Kind = "depth"       // call-depth cap
	KindMemory      Kind = "memory"      // memory cap
	KindOutput      Kind = "output"      // output size cap
	KindArgs        Kind = "args"        // args do not fit the signature or the parameter schema
	KindHost        Kind = "host"        // a host call (HTTP, delegation) failed
	KindDecode      Kind = "decode"      // fetched upstream content could not be decoded
	KindResult      Kind = "result"      // results could not be encoded
	KindReturned    Kind = "returned"    // the function returned a non-nil error of its own
	KindAcceptance  Kind = "acceptance"  // an acceptance example or test of the contract failed
	KindInternal    Kind = "internal"    // the sandbox or the forge itself failed
	KindDeliverable Kind = "deliverable" // the result violates the role's deliverable schema
	KindProvider    Kind = "provider"    // the code generator failed
	KindCallDepth   Kind = "call_depth"  // a delegation (host Call) would pass the depth cap
	KindCapacity    Kind = "capacity"    // no free interpreter, instance or worker in time: the code never ran
	KindClosed      Kind = "closed"      // the call was made on a closed Forge: the code never ran
	KindArgsSize    Kind = "args_size"   // the args alone exceed the role's memory cap (or the delegation args cap): the code never ran
	KindModelCalls  Kind = "model_calls" // the caller spent the model calls it may spend: no new code was asked for
	// KindNotReplayable: a replayed input's run sent a request a replay does not send (an HTTP
	// method other than GET or HEAD); it says nothing about the code.
	KindNotReplayable Kind = "not_replayable"
)

// Network is the kind of network error a failing host call met.
type Network string

// Network error kinds; anything else non-empty is classified as an unspecified network failure.
const (
	NetDNS     Network = "dns"
	NetRefused Network = "refused"
	NetReset   Network = "reset"
	NetTLS     Network = "tls"
	NetTimeout Network = "timeout"
)

// ProviderError is the kind of failure a code generator reported (provider.Error.Kind).
type ProviderError string

// Provider failure kinds.
const (
	ProviderUnavailable ProviderError = "unavailable"
	ProviderRateLimited ProviderError = "rate_limited"
	ProviderBadAnswer   ProviderError = "bad_answer"
	ProviderAuth        ProviderError = "auth"
	ProviderConfig      ProviderError = "config"
)

// Failure is the evidence about one failed call, as plain data: the caller copies it from the
// sandbox's or the provider's typed error, so this package needs neither.
type Failure struct {
	Kind Kind
	// HostCallInFlight: a host call had not returned when the failure happened (sandbox.Error).
	HostCallInFlight bool
	// HTTPStatus of the failing host call; 0 when there was no response.
	HTTPStatus int
	// Network error kind of the failing host call; empty when there was none.
	Network Network
	// UpstreamRead: the call had read upstream data (an HTTP body, a delegated call's result)
	// before it failed.
	UpstreamRead bool
	// ProviderError kind when Kind is KindProvider.
	ProviderError ProviderError
	// StaleContract: the artifact was verified against an older contract than the current one.
	StaleContract bool
	// CallerDeadline: the deadline or cancellation that ended the call was its caller's (a
	// delegating artifact's, or the context a program passed in), earlier than the artifact's
	// own limit.
	CallerDeadline bool
	// ValueExpected: the contract says these args must succeed (an acceptance example with the
	// same args expects a value), so an error the code returns for them is its own fault.
	ValueExpected bool
}

// Result is a classification and the rule that produced it.
type Result struct {
	Class Class
	Rule  Rule
}

// String renders "class/rule", the form used in CLI messages.
func (r Result) String() string { return string(r.Class) + "/" + string(r.Rule) }

// Retriable reports whether the same call, with the same arguments and the same code, may succeed
// later: true only for transient failures of the outside world (network, 429, 5xx, a provider
// that is down), so a caller knows when retrying is worth it.
func (r Result) Retriable() bool { return r.Rule.info().retriable }

// Classify maps the evidence of a failure to its class, following the table of DESIGN.md:
//
//   - caller: args do not fit the signature or the parameter schema, or the code returned an
//     error of its own on purpose (its answer about this input) for args the contract does not
//     say must succeed;
//   - extrinsic: a host call failed (DNS, refused, reset, TLS, timeout, HTTP 429 or 5xx), the
//     deadline passed while a host call was in flight or was the caller's (shorter than the artifact's own limit), no sandbox capacity came in time, the provider was
//     unavailable or rate limited — and the forge's own internal errors, which are never the
//     artifact's fault;
//   - adaptive: decode errors on fetched content, HTTP 404/410 (and other 4xx) from an allowed
//     host, a deliverable violation after upstream data was read, or any intrinsic evidence
//     while the contract is stale (the code was proven against an older contract);
//   - intrinsic: compile or policy errors, panics, the memory, depth, delegation depth or output
//     caps, a compute deadline with no host call in flight, unencodable results, a deliverable
//     violation with no upstream data involved, an error the code returned for args that an
//     acceptance example says must give a value.
//
// Evidence that does not apply to the kind is ignored (an HTTP status on a panic, say).
func Classify(f Failure) Result {
	r := classifyKind(f)
	if f.StaleContract && r.Class == Intrinsic {
		return Result{Adaptive, RuleStaleContract}
	}
	return r
}

func classifyKind(f Failure) Result {
	switch f.Kind {
	case KindArgs:
		return Result{Caller, RuleArgs}
	case KindArgsSize:
		return Result{Caller, RuleArgsTooLarge}
	case KindClosed:
		return Result{Caller, RuleClosed}
	case KindModelCalls:
		return Result{Caller, RuleModelCalls}
	case KindCompile:
		return Result{Intrinsic, RuleCompile}
	case KindPolicy:
		return Result{Intrinsic, RulePolicy}
	case KindPanic:
		return Result{Intrinsic, RulePanic}
	case KindDepth:
		return Result{Intrinsic, RuleDepthCap}
	case KindMemory:
		return Result{Intrinsic, RuleMemoryCap}
	case KindOutput:
		return Result{Intrinsic, RuleOutputCap}
	case KindResult:
		return Result{Intrinsic, RuleResultEncode}
	case KindDeadline:
		switch {
		case f.HostCallInFlight:
			return Result{Extrinsic, RuleDeadlineHostInFlight}
		case f.CallerDeadline:
			return Result{Extrinsic, RuleDeadlineCaller}
		}
		return Result{Intrinsic, RuleDeadlineCompute}
	case KindCallDepth:
		return Result{Intrinsic, RuleCallDepthCap}
	case KindCapacity:
		return Result{Extrinsic, RuleCapacity}
	case KindNotReplayable:
		return Result{Extrinsic, RuleNotReplayable}
	case KindHost:
		return classifyHost(f)
	case KindDecode:
		return Result{Adaptive, RuleDecodeUpstream}
	case KindDeliverable:
		if f.UpstreamRead {
			return Result{Adaptive, RuleDeliverableAfterUpstream}
		}
		return Result{Intrinsic, RuleDeliverable}
	case KindProvider:
		return classifyProvider(f.ProviderError)
	case KindAcceptance:
		return Result{Intrinsic, RuleAcceptance}
	case KindReturned:
		switch {
		case f.UpstreamRead:
			return Result{Adaptive, RuleReturnedAfterUpstream}
		case f.ValueExpected:
			return Result{Intrinsic, RuleReturned}
		}
		// An error the code returns deliberately is its answer about the input, not a bug.
		return Result{Caller, RuleReturnedAnswer}
	case KindInternal:
		return Result{Extrinsic, RuleInternal}
	}
	return Result{Extrinsic, RuleUnknownKind}
}

// classifyHost reads a failed host call: the network error first (a timeout while reading a body
// after a 200 is still a network failure), then the HTTP status.
func classifyHost(f Failure) Result {
	switch f.Network {
	case "":
	case NetDNS:
		return Result{Extrinsic, RuleHostDNS}
	case NetRefused:
		return Result{Extrinsic, RuleHostRefused}
	case NetReset:
		return Result{Extrinsic, RuleHostReset}
	case NetTLS:
		return Result{Extrinsic, RuleHostTLS}
	case NetTimeout:
		return Result{Extrinsic, RuleHostTimeout}
	default:
		return Result{Extrinsic, RuleHostNetwork}
	}
	s := f.HTTPStatus
	switch {
	case s == 0:
		return Result{Extrinsic, RuleHostFailed}
	case s == 429:
		return Result{Extrinsic, RuleHostHTTP429}
	case s >= 500 && s <= 599:
		return Result{Extrinsic, RuleHostHTTP5xx}
	case s == 408:
		return Result{Extrinsic, RuleHostHTTP408}
	case s == 401 || s == 403 || s == 407:
		return Result{Extrinsic, RuleHostHTTPDenied}
	case s == 404 || s == 410:
		return Result{Adaptive, RuleHostHTTPGone}
	case s >= 400 && s <= 499:
		return Result{Adaptive, RuleHostHTTP4xx}
	}
	return Result{Adaptive, RuleHostResponse}
}

func classifyProvider(p ProviderError) Result {
	switch p {
	case ProviderUnavailable:
		return Result{Extrinsic, RuleProviderUnavailable}
	case ProviderRateLimited:
		return Result{Extrinsic, RuleProviderRateLimited}
	case ProviderBadAnswer:
		return Result{Extrinsic, RuleProviderBadAnswer}
	case ProviderAuth:
		return Result{Extrinsic, RuleProviderAuth}
	case ProviderConfig:
		return Result{Extrinsic, RuleProviderConfig}
	}
	return Result{Extrinsic, RuleProvider}
}

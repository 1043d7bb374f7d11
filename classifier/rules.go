package classifier

// Rule is the stable id of the classification rule that fired. Events, CLI messages and lineage
// record it, so ids never change meaning once released.
type Rule string

// Caller rules.
const (
	RuleArgs Rule = "args" // args do not fit the signature or the parameter schema
	// RuleReturnedAnswer: the code returned an error of its own on purpose, its answer about
	// this input ("unknown unit"), and the contract does not say the input must succeed.
	RuleReturnedAnswer Rule = "returned_answer"
	// RuleClosed: the program called a Forge after closing it.
	RuleClosed Rule = "closed"
	// RuleArgsTooLarge: the args alone are larger than the role's memory cap (or, for a delegated
	// call, sandbox.MaxCallArgsBytes): refused before anything runs.
	RuleArgsTooLarge Rule = "args_too_large"
	// RuleModelCalls: the caller spent the model calls it may spend within the window (the
	// forge's ModelCallLimit): no new code is written for it until the window moves on.
	RuleModelCalls Rule = "model_calls"
	// RuleInputRepeated: code failed again on args it already failed on (see Attribute): one
	// input counts once toward an artifact's health.
	RuleInputRepeated Rule = "input_repeated"
	// RuleInputSpecific: every version of the code that passes the acceptance set fails on these
	// args while the others pass (see Attribute): the failure is the input's.
	RuleInputSpecific Rule = "input_specific"
	// RuleInputPreviousFails: the previous generation fails on these args too, while every input
	// of the code's sample of real calls passes (see Attribute): the failure is the input's.
	RuleInputPreviousFails Rule = "input_previous_fails"
)

// Intrinsic rules: the artifact's own code is at fault.
const (
	RuleCompile         Rule = "compile"          // parse or type error
	RulePolicy          Rule = "policy"           // sandbox policy violation
	RulePanic           Rule = "panic"            // runtime panic
	RuleDeadlineCompute Rule = "deadline_compute" // deadline with no host call in flight
	RuleDepthCap        Rule = "depth_cap"        // call-depth cap
	RuleMemoryCap       Rule = "memory_cap"       // memory cap
	RuleOutputCap       Rule = "output_cap"       // output size cap
	RuleResultEncode    Rule = "result_encode"    // results cannot be JSON-encoded
	RuleDeliverable     Rule = "deliverable"      // deliverable violated, no upstream data read
	RuleReturned        Rule = "returned_error"   // the code returned an error for args an acceptance example says must succeed
	RuleAcceptance      Rule = "acceptance"       // a contract acceptance example or test failed
	RuleCallDepthCap    Rule = "call_depth_cap"   // a delegation chain passed limits.max_call_depth (runaway delegation)
	// RuleReplayChanged: new code changes answers the current code gave to real calls (the
	// artifact's sample), more than the policy allows (forge's safe regeneration).
	RuleReplayChanged Rule = "replay_changed"
)

// Extrinsic rules: the world outside the artifact failed; never counted against it.
const (
	RuleDeadlineHostInFlight Rule = "deadline_host_in_flight" // deadline while a host call was in flight
	RuleCapacity             Rule = "capacity"                // no free interpreter, instance or worker in time: the code never ran
	RuleDeadlineCaller       Rule = "deadline_caller"         // the caller's deadline or cancellation, earlier than the artifact's own
	RuleHostDNS              Rule = "host_network_dns"
	RuleHostRefused          Rule = "host_network_refused"
	RuleHostReset            Rule = "host_network_reset"
	RuleHostTLS              Rule = "host_network_tls"
	RuleHostTimeout          Rule = "host_network_timeout"
	RuleHostNetwork          Rule = "host_network"     // another network error kind
	RuleHostFailed           Rule = "host_failed"      // a host call failed with no status and no network kind
	RuleHostHTTP429          Rule = "host_http_429"    // rate limited by the upstream
	RuleHostHTTP5xx          Rule = "host_http_5xx"    // upstream server error
	RuleHostHTTP408          Rule = "host_http_408"    // upstream request timeout
	RuleHostHTTPDenied       Rule = "host_http_denied" // 401, 403, 407: access is the operator's matter, code cannot grant it
	RuleProviderUnavailable  Rule = "provider_unavailable"
	RuleProviderRateLimited  Rule = "provider_rate_limited"
	RuleProviderBadAnswer    Rule = "provider_bad_answer"
	RuleProviderAuth         Rule = "provider_auth"
	RuleProviderConfig       Rule = "provider_config"
	RuleProvider             Rule = "provider"       // another provider failure
	RuleInternal             Rule = "internal"       // the forge or the sandbox failed, not the artifact
	RuleUnknownKind          Rule = "unknown_kind"   // a failure kind this classifier does not know
	RuleNotReplayable        Rule = "not_replayable" // a replayed input's run would have sent a request again (not GET or HEAD)
)

// Adaptive rules: upstream data or the contract drifted away from what the code expects.
const (
	RuleHostHTTPGone             Rule = "host_http_gone"     // 404 or 410 from an allowed host
	RuleHostHTTP4xx              Rule = "host_http_4xx"      // another 4xx: the upstream rejects the request shape
	RuleHostResponse             Rule = "host_http_response" // a status below 400 yet the host call failed (size cap, redirect)
	RuleDecodeUpstream           Rule = "decode_upstream"    // fetched content does not decode
	RuleDeliverableAfterUpstream Rule = "deliverable_after_upstream"
	RuleStaleContract            Rule = "stale_contract"          // intrinsic evidence on code proven against an older contract
	RuleReturnedAfterUpstream    Rule = "returned_after_upstream" // the code returned an error after reading upstream data
)

type ruleInfo struct {
	class     Class
	retriable bool
}

// rules is the one table of every rule, its class and whether a plain retry may help.
var rules = map[Rule]ruleInfo{
	RuleArgs:               {Caller, false},
	RuleReturnedAnswer:     {Caller, false},
	RuleClosed:             {Caller, false},
	RuleArgsTooLarge:       {Caller, false},
	RuleModelCalls:         {Caller, false},
	RuleInputRepeated:      {Caller, false},
	RuleInputSpecific:      {Caller, false},
	RuleInputPreviousFails: {Caller, false},

	RuleCompile:         {Intrinsic, false},
	RulePolicy:          {Intrinsic, false},
	RulePanic:           {Intrinsic, false},
	RuleDeadlineCompute: {Intrinsic, false},
	RuleDepthCap:        {Intrinsic, false},
	RuleMemoryCap:       {Intrinsic, false},
	RuleOutputCap:       {Intrinsic, false},
	RuleResultEncode:    {Intrinsic, false},
	RuleDeliverable:     {Intrinsic, false},
	RuleReturned:        {Intrinsic, false},
	RuleAcceptance:      {Intrinsic, false},
	RuleCallDepthCap:    {Intrinsic, false},

	RuleDeadlineHostInFlight: {Extrinsic, true},
	RuleCapacity:             {Extrinsic, true},
	RuleDeadlineCaller:       {Extrinsic, false},
	RuleHostDNS:              {Extrinsic, true},
	RuleHostRefused:          {Extrinsic, true},
	RuleHostReset:            {Extrinsic, true},
	RuleHostTLS:              {Extrinsic, true},
	RuleHostTimeout:          {Extrinsic, true},
	RuleHostNetwork:          {Extrinsic, true},
	RuleHostFailed:           {Extrinsic, true},
	RuleHostHTTP429:          {Extrinsic, true},
	RuleHostHTTP5xx:          {Extrinsic, true},
	RuleHostHTTP408:          {Extrinsic, true},
	RuleHostHTTPDenied:       {Extrinsic, false},
	RuleProviderUnavailable:  {Extrinsic, true},
	RuleProviderRateLimited:  {Extrinsic, true},
	RuleProviderBadAnswer:    {Extrinsic, true},
	RuleProviderAuth:         {Extrinsic, false},
	RuleProviderConfig:       {Extrinsic, false},
	RuleProvider:             {Extrinsic, false},
	RuleInternal:             {Extrinsic, false},
	RuleUnknownKind:          {Extrinsic, false},
	RuleNotReplayable:        {Extrinsic, false},

	RuleHostHTTPGone:             {Adaptive, false},
	RuleHostHTTP4xx:              {Adaptive, false},
	RuleHostResponse:             {Adaptive, false},
	RuleDecodeUpstream:           {Adaptive, false},
	RuleDeliverableAfterUpstream: {Adaptive, false},
	RuleStaleContract:            {Adaptive, false},
	RuleReturnedAfterUpstream:    {Adaptive, false},
}

func (r Rule) info() ruleInfo { return rules[r] }

// Class is the class this rule always yields, or "" for an unknown rule. It lets a reader of a
// stored event recover the class from the rule alone.
func (r Rule) Class() Class { return rules[r].class }

// Valid reports whether r is a rule this classifier can fire.
func (r Rule) Valid() bool { _, ok := rules[r]; return ok }

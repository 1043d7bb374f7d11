package classifier

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassifyNamedCases(t *testing.T) {
	cases := []struct {
		name string
		in   Failure
		want Result
	}{
		// The DESIGN.md table, row by row.
		{"parse or type error", Failure{Kind: KindCompile}, Result{Intrinsic, RuleCompile}},
		{"panic", Failure{Kind: KindPanic}, Result{Intrinsic, RulePanic}},
		{"policy violation", Failure{Kind: KindPolicy}, Result{Intrinsic, RulePolicy}},
		{"memory cap", Failure{Kind: KindMemory}, Result{Intrinsic, RuleMemoryCap}},
		{"stack depth cap", Failure{Kind: KindDepth}, Result{Intrinsic, RuleDepthCap}},
		{"output cap", Failure{Kind: KindOutput}, Result{Intrinsic, RuleOutputCap}},
		{"unencodable result", Failure{Kind: KindResult}, Result{Intrinsic, RuleResultEncode}},
		{"compute deadline", Failure{Kind: KindDeadline}, Result{Intrinsic, RuleDeadlineCompute}},
		{"deliverable violation without upstream read", Failure{Kind: KindDeliverable}, Result{Intrinsic, RuleDeliverable}},
		{"dns", Failure{Kind: KindHost, Network: NetDNS}, Result{Extrinsic, RuleHostDNS}},
		{"refused", Failure{Kind: KindHost, Network: NetRefused}, Result{Extrinsic, RuleHostRefused}},
		{"reset", Failure{Kind: KindHost, Network: NetReset}, Result{Extrinsic, RuleHostReset}},
		{"tls", Failure{Kind: KindHost, Network: NetTLS}, Result{Extrinsic, RuleHostTLS}},
		{"network timeout", Failure{Kind: KindHost, Network: NetTimeout}, Result{Extrinsic, RuleHostTimeout}},
		{"other network error", Failure{Kind: KindHost, Network: "unreachable"}, Result{Extrinsic, RuleHostNetwork}},
		{"429", Failure{Kind: KindHost, HTTPStatus: 429}, Result{Extrinsic, RuleHostHTTP429}},
		{"500", Failure{Kind: KindHost, HTTPStatus: 500}, Result{Extrinsic, RuleHostHTTP5xx}},
		{"503", Failure{Kind: KindHost, HTTPStatus: 503}, Result{Extrinsic, RuleHostHTTP5xx}},
		{"599", Failure{Kind: KindHost, HTTPStatus: 599}, Result{Extrinsic, RuleHostHTTP5xx}},
		{"deadline with host call in flight", Failure{Kind: KindDeadline, HostCallInFlight: true}, Result{Extrinsic, RuleDeadlineHostInFlight}},
		{"no capacity", Failure{Kind: KindCapacity}, Result{Extrinsic, RuleCapacity}},
		{"no capacity, stale or not", Failure{Kind: KindCapacity, StaleContract: true}, Result{Extrinsic, RuleCapacity}},
		{"the caller's deadline", Failure{Kind: KindDeadline, CallerDeadline: true}, Result{Extrinsic, RuleDeadlineCaller}},
		{"delegation depth cap", Failure{Kind: KindCallDepth}, Result{Intrinsic, RuleCallDepthCap}},
		{"provider unavailable", Failure{Kind: KindProvider, ProviderError: ProviderUnavailable}, Result{Extrinsic, RuleProviderUnavailable}},
		{"provider rate limited", Failure{Kind: KindProvider, ProviderError: ProviderRateLimited}, Result{Extrinsic, RuleProviderRateLimited}},
		{"decode error on fetched content", Failure{Kind: KindDecode, UpstreamRead: true}, Result{Adaptive, RuleDecodeUpstream}},
		{"404", Failure{Kind: KindHost, HTTPStatus: 404}, Result{Adaptive, RuleHostHTTPGone}},
		{"410", Failure{Kind: KindHost, HTTPStatus: 410}, Result{Adaptive, RuleHostHTTPGone}},
		{"deliverable after upstream read", Failure{Kind: KindDeliverable, UpstreamRead: true}, Result{Adaptive, RuleDeliverableAfterUpstream}},
		{"stale contract turns a panic adaptive", Failure{Kind: KindPanic, StaleContract: true}, Result{Adaptive, RuleStaleContract}},
		{"args", Failure{Kind: KindArgs}, Result{Caller, RuleArgs}},

		// Ambiguous combinations: which evidence wins.
		{"args beat everything", Failure{Kind: KindArgs, HostCallInFlight: true, HTTPStatus: 500, UpstreamRead: true, StaleContract: true}, Result{Caller, RuleArgs}},
		{"stale contract does not hide an outage", Failure{Kind: KindHost, HTTPStatus: 503, StaleContract: true}, Result{Extrinsic, RuleHostHTTP5xx}},
		{"stale contract does not hide a host-bound deadline", Failure{Kind: KindDeadline, HostCallInFlight: true, StaleContract: true}, Result{Extrinsic, RuleDeadlineHostInFlight}},
		{"stale contract keeps the specific adaptive rule", Failure{Kind: KindHost, HTTPStatus: 404, StaleContract: true}, Result{Adaptive, RuleHostHTTPGone}},
		{"stale contract and compute deadline", Failure{Kind: KindDeadline, StaleContract: true}, Result{Adaptive, RuleStaleContract}},
		{"stale contract and deliverable", Failure{Kind: KindDeliverable, StaleContract: true}, Result{Adaptive, RuleStaleContract}},
		{"stale contract never excuses the caller", Failure{Kind: KindArgs, StaleContract: true}, Result{Caller, RuleArgs}},
		{"network error wins over a status", Failure{Kind: KindHost, Network: NetTimeout, HTTPStatus: 200}, Result{Extrinsic, RuleHostTimeout}},
		{"network error wins over a 404", Failure{Kind: KindHost, Network: NetReset, HTTPStatus: 404}, Result{Extrinsic, RuleHostReset}},
		{"host failure with no evidence", Failure{Kind: KindHost}, Result{Extrinsic, RuleHostFailed}},
		{"408", Failure{Kind: KindHost, HTTPStatus: 408}, Result{Extrinsic, RuleHostHTTP408}},
		{"401", Failure{Kind: KindHost, HTTPStatus: 401}, Result{Extrinsic, RuleHostHTTPDenied}},
		{"403", Failure{Kind: KindHost, HTTPStatus: 403}, Result{Extrinsic, RuleHostHTTPDenied}},
		{"400", Failure{Kind: KindHost, HTTPStatus: 400}, Result{Adaptive, RuleHostHTTP4xx}},
		{"422", Failure{Kind: KindHost, HTTPStatus: 422}, Result{Adaptive, RuleHostHTTP4xx}},
		{"200 yet failed (size cap)", Failure{Kind: KindHost, HTTPStatus: 200}, Result{Adaptive, RuleHostResponse}},
		{"302 not followed", Failure{Kind: KindHost, HTTPStatus: 302}, Result{Adaptive, RuleHostResponse}},
		{"decode is upstream by definition", Failure{Kind: KindDecode}, Result{Adaptive, RuleDecodeUpstream}},
		{"panic after upstream read stays intrinsic", Failure{Kind: KindPanic, UpstreamRead: true}, Result{Intrinsic, RulePanic}},
		{"panic while a host call was in flight stays intrinsic", Failure{Kind: KindPanic, HostCallInFlight: true}, Result{Intrinsic, RulePanic}},
		{"compute deadline after upstream read stays intrinsic", Failure{Kind: KindDeadline, UpstreamRead: true}, Result{Intrinsic, RuleDeadlineCompute}},
		{"status on a non-host failure is ignored", Failure{Kind: KindCompile, HTTPStatus: 503, Network: NetDNS}, Result{Intrinsic, RuleCompile}},
		{"provider bad answer", Failure{Kind: KindProvider, ProviderError: ProviderBadAnswer}, Result{Extrinsic, RuleProviderBadAnswer}},
		{"provider auth", Failure{Kind: KindProvider, ProviderError: ProviderAuth}, Result{Extrinsic, RuleProviderAuth}},
		{"provider config", Failure{Kind: KindProvider, ProviderError: ProviderConfig}, Result{Extrinsic, RuleProviderConfig}},
		{"provider other", Failure{Kind: KindProvider}, Result{Extrinsic, RuleProvider}},
		{"provider stale stays extrinsic", Failure{Kind: KindProvider, ProviderError: ProviderUnavailable, StaleContract: true}, Result{Extrinsic, RuleProviderUnavailable}},
		{"internal is never the artifact's fault", Failure{Kind: KindInternal}, Result{Extrinsic, RuleInternal}},
		{"acceptance failure is the code's", Failure{Kind: KindAcceptance}, Result{Intrinsic, RuleAcceptance}},
		{"returned error is the code's answer about the input", Failure{Kind: KindReturned}, Result{Caller, RuleReturnedAnswer}},
		{"returned error where the contract expects a value is the code's", Failure{Kind: KindReturned, ValueExpected: true}, Result{Intrinsic, RuleReturned}},
		{"returned error after upstream read, value expected", Failure{Kind: KindReturned, UpstreamRead: true, ValueExpected: true}, Result{Adaptive, RuleReturnedAfterUpstream}},
		{"stale contract leaves a deliberate error the caller's", Failure{Kind: KindReturned, StaleContract: true}, Result{Caller, RuleReturnedAnswer}},
		{"returned error after upstream read", Failure{Kind: KindReturned, UpstreamRead: true}, Result{Adaptive, RuleReturnedAfterUpstream}},
		{"unknown kind", Failure{Kind: "cosmic_ray"}, Result{Extrinsic, RuleUnknownKind}},
		{"empty kind", Failure{}, Result{Extrinsic, RuleUnknownKind}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Classify(tc.in))
		})
	}
}

func TestRetriable(t *testing.T) {
	cases := []struct {
		in   Failure
		want bool
	}{
		{Failure{Kind: KindHost, HTTPStatus: 429}, true},
		{Failure{Kind: KindHost, HTTPStatus: 503}, true},
		{Failure{Kind: KindHost, Network: NetDNS}, true},
		{Failure{Kind: KindDeadline, HostCallInFlight: true}, true},
		{Failure{Kind: KindProvider, ProviderError: ProviderRateLimited}, true},
		{Failure{Kind: KindProvider, ProviderError: ProviderConfig}, false},
		{Failure{Kind: KindHost, HTTPStatus: 403}, false},
		{Failure{Kind: KindInternal}, false},
		{Failure{Kind: KindPanic}, false},
		{Failure{Kind: KindHost, HTTPStatus: 404}, false},
		{Failure{Kind: KindArgs}, false},
	}
	for _, tc := range cases {
		r := Classify(tc.in)
		assert.Equal(t, tc.want, r.Retriable(), "%+v -> %s", tc.in, r)
	}
}

// TestClassifyMatrix runs every combination of evidence and checks the invariants that hold for
// all of them, and that every rule of the table can fire.
func TestClassifyMatrix(t *testing.T) {
	kinds := []Kind{KindCompile, KindPolicy, KindPanic, KindDeadline, KindDepth, KindMemory, KindOutput,
		KindArgs, KindHost, KindDecode, KindResult, KindReturned, KindAcceptance, KindInternal, KindDeliverable, KindProvider, KindCallDepth, KindCapacity, KindClosed, KindArgsSize, KindModelCalls, KindNotReplayable, "", "bogus"}
	statuses := []int{0, 100, 200, 301, 400, 401, 403, 404, 407, 408, 410, 418, 422, 429, 500, 503, 599, 600}
	networks := []Network{"", NetDNS, NetRefused, NetReset, NetTLS, NetTimeout, "weird"}
	providers := []ProviderError{"", ProviderUnavailable, ProviderRateLimited, ProviderBadAnswer, ProviderAuth, ProviderConfig, "weird"}
	bools := []bool{false, true}

	fired := map[Rule]int{}
	n := 0
	for _, k := range kinds {
		for _, inFlight := range bools {
			for _, st := range statuses {
				for _, nw := range networks {
					for _, up := range bools {
						for _, pe := range providers {
							for _, stale := range bools {
								for _, callerDL := range bools {
									for _, want := range bools {
										f := Failure{Kind: k, HostCallInFlight: inFlight, HTTPStatus: st, Network: nw,
											UpstreamRead: up, ProviderError: pe, StaleContract: stale, CallerDeadline: callerDL, ValueExpected: want}
										r := Classify(f)
										n++
										fired[r.Rule]++
										checkInvariants(t, f, r)
										if t.Failed() {
											t.Fatalf("first violation at %+v -> %s", f, r)
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d combinations, %d distinct rules fired", n, len(fired))
	// The input rules fire from Attribute, over what Classify answers.
	for rule := range fired {
		fired[Attribute(Result{rule.Class(), rule}, Input{Counted: true}).Rule]++
		fired[Attribute(Result{rule.Class(), rule}, Input{OtherCodeFails: true, OthersPass: true}).Rule]++
		fired[Attribute(Result{rule.Class(), rule}, Input{PreviousFails: true, SamplePasses: true}).Rule]++
	}
	for rule := range rules {
		assert.NotZero(t, fired[rule], "rule %s never fires", rule)
	}
}

func checkInvariants(t *testing.T, f Failure, r Result) {
	t.Helper()
	// The rule table and Classify agree, and every answer is a known class and rule.
	require.True(t, r.Class.Valid())
	require.True(t, r.Rule.Valid())
	assert.Equal(t, r.Rule.Class(), r.Class)

	// Args are always the caller's, and so is an error the code returned on purpose for args
	// the contract does not say must succeed (with no upstream data involved); nothing else is.
	deliberate := f.Kind == KindReturned && !f.UpstreamRead && !f.ValueExpected
	assert.Equal(t, f.Kind == KindArgs || f.Kind == KindClosed || f.Kind == KindArgsSize || f.Kind == KindModelCalls || deliberate, r.Class == Caller)

	// A stale contract never leaves a failure intrinsic, and never turns an extrinsic or caller
	// failure into one that counts.
	stale, fresh := f, f
	stale.StaleContract, fresh.StaleContract = true, false
	rs, rf := Classify(stale), Classify(fresh)
	assert.NotEqual(t, Intrinsic, rs.Class)
	assert.Equal(t, rf.Class.CountsTowardHealth(), rs.Class.CountsTowardHealth())

	// Evidence that does not belong to the kind never changes the answer.
	g := f
	if f.Kind != KindHost {
		g.HTTPStatus, g.Network = 0, ""
	}
	if f.Kind != KindDeadline {
		g.HostCallInFlight, g.CallerDeadline = false, false
	}
	// Waiting for capacity is never the code's fault.
	if f.Kind == KindCapacity {
		assert.Equal(t, Extrinsic, r.Class)
	}
	if f.Kind != KindDeliverable && f.Kind != KindReturned {
		g.UpstreamRead = false
	}
	if f.Kind != KindReturned {
		g.ValueExpected = false
	}
	if f.Kind != KindProvider {
		g.ProviderError = ""
	}
	assert.Equal(t, r, Classify(g))

	// Outages never count; only what the code can fix is repaired.
	if r.Class == Extrinsic || r.Class == Caller {
		assert.False(t, r.Class.CountsTowardHealth())
		assert.False(t, r.Class.Repairable())
	}
	// A retry can only help when the world, not the code, failed.
	if r.Retriable() {
		assert.Equal(t, Extrinsic, r.Class)
	}
}

func TestClass(t *testing.T) {
	counts := map[Class]bool{Intrinsic: true, Adaptive: true, Extrinsic: false, Caller: false}
	for _, c := range Classes {
		assert.Equal(t, counts[c], c.CountsTowardHealth(), c)
		assert.Equal(t, counts[c], c.Repairable(), c)
		got, err := ParseClass(string(c))
		require.NoError(t, err)
		assert.Equal(t, c, got)
	}
	assert.Len(t, counts, len(Classes))
	_, err := ParseClass("flaky")
	assert.ErrorContains(t, err, `unknown class "flaky"`)
	assert.False(t, Class("").Valid())
	assert.False(t, Class("").CountsTowardHealth())
	assert.Equal(t, Class(""), Rule("nope").Class())
}

func BenchmarkClassify(b *testing.B) {
	f := Failure{Kind: KindHost, HTTPStatus: 503, UpstreamRead: true}
	b.ReportAllocs()
	for b.Loop() {
		_ = Classify(f)
	}
}

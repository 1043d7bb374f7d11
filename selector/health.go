package selector

// Health is the outcome counters of the current generation's recent calls. Extrinsic failures
// are carried so that callers can pass their counters as they are, and ignored: an outage says
// nothing about the code. Caller failures are not carried at all — among them the failures the
// forge attributes to their input (classifier.Attribute: args over the caps, a repeat of an input
// that already counted, an input every acceptance-passing version fails on), so that the
// counters hold the code's failures on distinct inputs and no single caller can degrade it.
type Health struct {
	Successes         int
	IntrinsicFailures int
	AdaptiveFailures  int
	ExtrinsicFailures int // never read
}

// HealthPolicy is when the counters mean degraded: at least MinFailures intrinsic+adaptive
// failures, making up at least MaxFailureRate of the calls that succeeded or failed by the
// artifact's own fault.
type HealthPolicy struct {
	MinFailures    int
	MaxFailureRate float64
}

// DefaultHealthPolicy: three of the artifact's own failures, and at least half of its judged
// calls, before it is degraded. A single failure is handled by the post-failure repair instead.
var DefaultHealthPolicy = HealthPolicy{MinFailures: 3, MaxFailureRate: 0.5}

// Degraded reports whether h crosses p (the zero policy is DefaultHealthPolicy). The forge uses
// it both here and to mark an artifact's lifecycle degraded when it records outcomes.
func (h Health) Degraded(p HealthPolicy) bool {
	if p == (HealthPolicy{}) {
		p = DefaultHealthPolicy
	}
	own := h.IntrinsicFailures + h.AdaptiveFailures
	if own <= 0 || own < p.MinFailures {
		return false
	}
	judged := own + max(h.Successes, 0)
	return float64(own) >= p.MaxFailureRate*float64(judged)
}

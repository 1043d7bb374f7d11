package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/artifactforge/forge/forge"
)

// Metrics are the server's Prometheus metrics, fed synchronously by the forge's live events (so a
// call's metrics are counted before its response is written: a shutdown loses none).
type Metrics struct {
	calls         *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	providerCalls *prometheus.CounterVec
	tokens        *prometheus.CounterVec
	generations   *prometheus.CounterVec
	repairs       *prometheus.CounterVec
	changes       *prometheus.CounterVec
}

// NewMetrics registers forge's metrics on reg.
func NewMetrics(reg prometheus.Registerer, f *forge.Forge) *Metrics {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forge_calls_total",
			Help: "Calls by role, method, program source (persisted, generated, repaired, regenerated) and failure class (empty: ok); calls to a role or method that does not exist count under \"_unknown\"."},
			[]string{"role", "method", "source", "class"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "forge_call_duration_seconds",
			Help:    "Call latency by program source.",
			Buckets: []float64{.00001, .00003, .0001, .0003, .001, .003, .01, .03, .1, .3, 1, 3, 10, 30}},
			[]string{"source"}),
		providerCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forge_provider_calls_total",
			Help: "Code generator calls by role and method."}, []string{"role", "method"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forge_provider_tokens_total",
			Help: "Code generator tokens by kind (input, output, cached)."}, []string{"kind"}),
		generations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forge_generations_total",
			Help: "New generations written, by program source (generated, repaired, regenerated)."}, []string{"source"}),
		repairs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forge_repairs_total",
			Help: "Repairs attempted, by result (succeeded, failed)."}, []string{"result"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forge_store_changes_total",
			Help: "Artifact and role changes seen by watch mode (any process), by kind."}, []string{"kind"}),
	}
	reg.MustRegister(m.calls, m.duration, m.providerCalls, m.tokens, m.generations, m.repairs, m.changes,
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "forge_live_events_dropped_total",
			Help: "Live events lost by subscribers (SSE, watch) that fell behind."}, func() float64 { return float64(f.LiveDropped()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "forge_events_dropped_total",
			Help: "Event log lines not written because the queue was full (warm successes' own lines, per-call mode only) or the log was closed; each is also counted in the log's \"dropped\" lines."},
			func() float64 { return float64(f.Health().EventsDropped) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "forge_events_lost_total",
			Help: "Event log lines the file refused (a full disk, permissions)."}, func() float64 { return float64(f.Health().EventsLost) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "forge_events_waited_total",
			Help: "Event log lines (generations, failures, operator actions) that found the queue full and waited rather than be dropped."},
			func() float64 { return float64(f.Health().EventsWaited) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "forge_live_programs",
			Help: "Compiled programs kept ready in this process."}, func() float64 { return float64(f.LivePrograms()) }),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Observe counts one live event.
func (m *Metrics) Observe(e *forge.LiveEvent) {
	if e.Call == nil {
		m.changes.WithLabelValues(e.Kind).Inc()
		return
	}
	c := e.Call
	if forge.IsOperatorAction(c) && c.ProgramSource == "" {
		return // a bless, quarantine, lift, ... is not a call (its artifact change is counted as one)
	}
	role, method := forge.LabelsOf(c) // a made-up role or method is no series of its own
	m.calls.WithLabelValues(role, method, c.ProgramSource, c.FailureClass).Inc()
	m.duration.WithLabelValues(c.ProgramSource).Observe(float64(c.DurationNS) / 1e9)
	if c.ProviderCalls > 0 {
		m.providerCalls.WithLabelValues(role, method).Add(float64(c.ProviderCalls))
		m.tokens.WithLabelValues("input").Add(float64(c.Tokens.InputTokens))
		m.tokens.WithLabelValues("output").Add(float64(c.Tokens.OutputTokens))
		m.tokens.WithLabelValues("cached").Add(float64(c.Tokens.CachedTokens))
	}
	switch c.ProgramSource {
	case forge.SourceGenerated, forge.SourceRepaired, forge.SourceRegenerated:
		if c.GenerationTrigger != "" {
			m.generations.WithLabelValues(c.ProgramSource).Inc()
		}
	}
	if c.RepairAttempted {
		r := "failed"
		if c.RepairSucceeded {
			r = "succeeded"
		}
		m.repairs.WithLabelValues(r).Inc()
	}
}

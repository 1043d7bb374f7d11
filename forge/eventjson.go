package forge

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/artifactforge/forge/provider"
)

// appendEvent appends e as one JSON object, for a call's own line the same document encoding/json
// makes of it (a test holds the two equal), without reflection: the event writer runs beside the warm path on the same
// cores, and encoding/json cost it a quarter of the CPU of a warm call.
func appendEvent(b []byte, e *Event) []byte {
	// An aggregate or a drop record (Kind set) leaves out the per-call fields that are zero in
	// it (ids, counters, repair, provider calls, tokens): it decodes to the same Event, in
	// fewer bytes.
	compact := e.Kind != ""
	b = append(b, `{"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if !compact || e.TraceID != 0 {
		b = append(b, `,"trace_id":`...)
		b = appendID(b, e.TraceID)
	}
	if !compact || e.CallID != 0 {
		b = append(b, `,"call_id":`...)
		b = appendID(b, e.CallID)
	}
	if e.ParentCallID != 0 {
		b = append(b, `,"parent_call_id":`...)
		b = appendID(b, e.ParentCallID)
	}
	i64 := func(b []byte, k string, v int64) []byte {
		if compact && v == 0 {
			return b
		}
		return appendInt(b, k, v)
	}
	str := func(b []byte, k, v string) []byte {
		if compact && v == "" {
			return b
		}
		return appendStr(b, k, v)
	}
	boolean := func(b []byte, k string, v bool) []byte {
		if compact && !v {
			return b
		}
		return appendBool(b, k, v)
	}
	b = i64(b, "depth", int64(e.Depth))
	b = str(b, "role", e.Role)
	b = str(b, "method", e.Method)
	b = boolean(b, "ok", e.OK)
	if e.Client != "" {
		b = appendStr(b, "client", e.Client)
	}
	b = str(b, "action", e.Action)
	b = str(b, "reason", e.Reason)
	b = appendStrOmit(b, "program_source", e.ProgramSource)
	b = boolean(b, "artifact_hit", e.ArtifactHit)
	if e.ArtifactGen != 0 {
		b = appendInt(b, "artifact_gen", int64(e.ArtifactGen))
	}
	b = appendStrOmit(b, "artifact_generation_trigger", e.GenerationTrigger)
	b = appendStrOmit(b, "prompt_version", e.PromptVersion)
	b = appendStrOmit(b, "contract_fingerprint", e.ContractFingerprint)
	b = appendStrOmit(b, "who", e.Who)
	if e.ArtifactGenBefore != 0 {
		b = appendInt(b, "artifact_gen_before", int64(e.ArtifactGenBefore))
	}
	b = appendStrOmit(b, "lifecycle_before", e.LifecycleBefore)
	b = appendStrOmit(b, "lifecycle", e.Lifecycle)
	b = appendStrOmit(b, "detail", e.Detail)
	b = appendStrOmit(b, "replay", e.Replay)
	b = i64(b, "artifact_success_count", e.SuccessCount)
	b = i64(b, "artifact_failure_count", e.FailureCount)
	b = i64(b, "artifact_intrinsic_failure_count", e.IntrinsicFailureCount)
	b = i64(b, "artifact_adaptive_failure_count", e.AdaptiveFailureCount)
	b = i64(b, "artifact_extrinsic_failure_count", e.ExtrinsicFailureCount)
	b = appendStrOmit(b, "failure_type", e.FailureType)
	b = appendStrOmit(b, "failure_class", e.FailureClass)
	b = appendStrOmit(b, "failure_rule", e.FailureRule)
	b = boolean(b, "repair_attempted", e.RepairAttempted)
	b = boolean(b, "repair_succeeded", e.RepairSucceeded)
	b = i64(b, "provider_calls", int64(e.ProviderCalls))
	if !compact || e.Tokens != (provider.Usage{}) {
		b = append(b, `,"tokens":{`...)
		first := len(b)
		for _, t := range [...]struct {
			k string
			v int
		}{{"input_tokens", e.Tokens.InputTokens}, {"output_tokens", e.Tokens.OutputTokens}, {"cached_tokens", e.Tokens.CachedTokens}} {
			if t.v != 0 {
				if len(b) > first {
					b = append(b, ',')
				}
				b = strconv.AppendQuote(b, t.k)
				b = append(b, ':')
				b = strconv.AppendInt(b, int64(t.v), 10)
			}
		}
		b = append(b, '}')
	}
	if e.PromptTokensEstimate != 0 {
		b = appendInt(b, "prompt_tokens_estimate", int64(e.PromptTokensEstimate))
	}
	b = i64(b, "duration_ns", e.DurationNS)
	b = i64(b, "sandbox_ns", e.SandboxNS)
	if e.EventsDropped != 0 {
		b = appendInt(b, "events_dropped", e.EventsDropped)
	}
	b = appendStrOmit(b, "kind", e.Kind)
	if e.Count != 0 {
		b = appendInt(b, "count", e.Count)
	}
	if !e.FirstTime.IsZero() {
		b = append(appendKey(b, "first_time"), '"')
		b = e.FirstTime.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	for _, f := range [...]struct {
		k string
		v int64
	}{{"duration_p50_ns", e.DurationP50NS}, {"duration_p99_ns", e.DurationP99NS}, {"duration_max_ns", e.DurationMaxNS}} {
		if f.v != 0 {
			b = appendInt(b, f.k, f.v)
		}
	}
	if len(e.DurationHist) > 0 {
		b = append(appendKey(b, "duration_hist"), '[')
		for i, v := range e.DurationHist {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, ']')
	}
	b = appendCounts(b, "dropped", e.Dropped)
	b = appendCounts(b, "lost", e.Lost)
	return append(b, '}', '\n')
}

// appendCounts appends a map of counts (omitted when empty), keys sorted as encoding/json does.
func appendCounts(b []byte, k string, m map[string]int64) []byte {
	if len(m) == 0 {
		return b
	}
	b = append(appendKey(b, k), '{')
	for i, name := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, name)
		b = append(b, ':')
		b = strconv.AppendInt(b, m[name], 10)
	}
	return append(b, '}')
}

func appendID(b []byte, id ID) []byte {
	const digits = "0123456789abcdef"
	if id == 0 {
		return append(b, `""`...)
	}
	b = append(b, '"')
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[(uint64(id)>>shift)&0xf])
	}
	return append(b, '"')
}

func appendKey(b []byte, k string) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

func appendInt(b []byte, k string, v int64) []byte {
	return strconv.AppendInt(appendKey(b, k), v, 10)
}

func appendBool(b []byte, k string, v bool) []byte {
	return strconv.AppendBool(appendKey(b, k), v)
}

func appendStrOmit(b []byte, k, v string) []byte {
	if v == "" {
		return b
	}
	return appendStr(b, k, v)
}

// appendStr appends a JSON string; anything but plain printable ASCII goes through encoding/json
// so that escaping is exactly the standard library's.
func appendStr(b []byte, k, v string) []byte {
	return appendString(appendKey(b, k), v)
}

// appendString appends v as a JSON string, escaped as encoding/json escapes it (appendStr).
func appendString(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(v)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, v...)
	return append(b, '"')
}

package forge

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// outcomeDoc is Outcome without AppendJSON's shortcut: encoding/json's own document of it.
type outcomeDoc Outcome

// AppendJSON appends o as the JSON document encoding/json makes of it (with HTML escaping, as
// json.Marshal and a json.Encoder by default; no newline), without reflection for the Outcome of
// a call: `forge serve` answers every call with one, and reflection was a twentieth of its CPU
// under load. An Outcome with a shadow replay, or whose value is not plain compact JSON, goes
// through encoding/json (a test holds the two equal).
func (o *Outcome) AppendJSON(b []byte) ([]byte, error) {
	if o.Meta.Replay != nil || !plainJSON(o.Value) {
		cp := outcomeDoc(*o) // a copy: marshalling o itself would move every caller's Outcome to the heap
		doc, err := json.Marshal(&cp)
		if err != nil {
			return b, err
		}
		return append(b, doc...), nil
	}
	b = append(b, `{"ok":`...)
	b = strconv.AppendBool(b, o.OK)
	if len(o.Value) > 0 {
		b = append(b, `,"value":`...)
		b = append(b, o.Value...)
	}
	if e := o.Err; e != nil {
		b = append(b, `,"error":{"type":`...)
		b = appendString(b, e.Type)
		b = appendStr(b, "class", e.Class)
		b = appendStrOmit(b, "rule", e.Rule)
		b = appendStr(b, "message", e.Message)
		b = appendBool(b, "retriable", e.Retriable)
		if e.RetryAfter != 0 {
			b = strconv.AppendInt(append(b, `,"retry_after":`...), int64(e.RetryAfter), 10)
		}
		b = append(b, '}')
	}
	m := &o.Meta
	b = append(b, `,"meta":{`...)
	if m.ProgramSource != "" {
		b = appendString(append(b, `"program_source":`...), m.ProgramSource)
		b = append(b, ',')
	}
	if m.ArtifactGen != 0 {
		b = strconv.AppendInt(append(b, `"artifact_gen":`...), int64(m.ArtifactGen), 10)
		b = append(b, ',')
	}
	b = strconv.AppendInt(append(b, `"duration":`...), int64(m.Duration), 10)
	b = appendInt(b, "provider_calls", int64(m.ProviderCalls))
	b = append(b, `,"tokens":{`...)
	t := m.Tokens
	n := len(b)
	if t.InputTokens != 0 {
		b = appendInt(b, "input_tokens", int64(t.InputTokens))
	}
	if t.OutputTokens != 0 {
		b = appendInt(b, "output_tokens", int64(t.OutputTokens))
	}
	if t.CachedTokens != 0 {
		b = appendInt(b, "cached_tokens", int64(t.CachedTokens))
	}
	if len(b) > n { // the first key's comma out
		b = append(b[:n], b[n+1:]...)
	}
	b = append(b, '}')
	b = appendStrOmit(b, "decision", m.Decision)
	if m.RepairAttempted {
		b = appendBool(b, "repair_attempted", true)
	}
	if m.RepairSucceeded {
		b = appendBool(b, "repair_succeeded", true)
	}
	if len(m.Logs) > 0 {
		b = append(b, `,"logs":[`...)
		for i, l := range m.Logs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, l)
		}
		b = append(b, ']')
	}
	if m.Joined {
		b = appendBool(b, "joined", true)
	}
	if m.Unchanged {
		b = appendBool(b, "unchanged", true)
	}
	return append(b, '}', '}'), nil
}

// plainJSON reports whether v is valid JSON that encoding/json writes back byte for byte: no
// white space to compact away and nothing its HTML escaping changes (<, >, &, U+2028, U+2029).
// An empty v (no value) is plain.
func plainJSON(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	if bytes.ContainsAny(v, " \t\r\n<>&\u2028\u2029") {
		return false
	}
	return json.Valid(v)
}

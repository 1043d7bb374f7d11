package registry

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// Sample bounds (see SampleConfig): how many distinct inputs an artifact keeps with their answers,
// and how many bytes of JSON (args and answer) they may hold together.
const (
	DefaultSampleMax      = 32
	DefaultSampleMaxBytes = 16 << 10
	// MaxSampleMax and MaxSampleMaxBytes cap what a contract may ask for: the sample is stored
	// in the artifact's record, which every process loads.
	MaxSampleMax      = 256
	MaxSampleMaxBytes = 256 << 10
)

// SampleConfig is a role's choice about the sample of real calls each of its artifacts keeps
// (forge's safe regeneration replays it on new code before the code is promoted). It is not part
// of the contract's fingerprint: changing it changes no code.
type SampleConfig struct {
	// Off keeps no sample: set it for roles whose inputs are sensitive (personal data, secrets).
	// Turning it off purges the kept sample at the next regeneration; `forge sample purge` does
	// it at once.
	Off bool `json:"off,omitempty"`
	// Max is how many distinct inputs are kept (DefaultSampleMax if 0, at most MaxSampleMax).
	Max int `json:"max,omitempty"`
	// MaxBytes bounds their JSON, args and answers together (DefaultSampleMaxBytes if 0).
	MaxBytes int `json:"max_bytes,omitempty"`
	// MaxChangedPercent: new code of an artifact that is not blessed is not promoted when it
	// changes the answers of more than this share of the sample (0: forge's default, 10;
	// negative: no threshold). A blessed artifact's new code may change none without
	// --accept-changes.
	MaxChangedPercent int `json:"max_changed_percent,omitempty"`
}

// Bounds returns the sample's count and byte bounds (0, 0 when it is off). A nil config is the
// default.
func (c *SampleConfig) Bounds() (max, maxBytes int) {
	max, maxBytes = DefaultSampleMax, DefaultSampleMaxBytes
	if c == nil {
		return max, maxBytes
	}
	if c.Off {
		return 0, 0
	}
	if c.Max > 0 {
		max = min(c.Max, MaxSampleMax)
	}
	if c.MaxBytes > 0 {
		maxBytes = min(c.MaxBytes, MaxSampleMaxBytes)
	}
	return max, maxBytes
}

// SampleEntry is one real call a generation answered: its args (canonical JSON) and its answer,
// a value or the error the code returned.
type SampleEntry struct {
	Args  json.RawMessage `json:"args"`
	Value json.RawMessage `json:"value,omitempty"`
	Err   string          `json:"error,omitempty"`
	Gen   int             `json:"gen"`
	At    time.Time       `json:"at"`
	// Client is the client whose call offered the input ("" for none): the replay's threshold
	// lets no single client decide (forge.ShadowPolicy).
	Client string `json:"client,omitempty"`
}

func (e SampleEntry) size() int { return len(e.Args) + len(e.Value) + len(e.Err) }

// MergeSample adds entries to cur, newest last, and returns the result and whether it differs
// from cur. Only entries of generation gen are kept (an answer of other code says nothing about
// gen's). An input already kept is replaced by the newer entry; then the oldest entries are
// dropped until at most max remain in at most maxBytes. An entry alone larger than maxBytes is
// never kept. Args are compared as inputs (CanonicalInput: one input spelled otherwise is kept
// once, the newest spelling); entries whose args or value are not JSON are dropped.
func MergeSample(cur, add []SampleEntry, gen, max, maxBytes int) ([]SampleEntry, bool) {
	if max <= 0 || maxBytes <= 0 {
		return nil, len(cur) > 0
	}
	changed := false
	out := make([]SampleEntry, 0, len(cur)+len(add))
	for _, e := range cur {
		if e.Gen != gen || canonEntry(&e) != nil {
			changed = true
			continue
		}
		out = append(out, e)
	}
	for _, e := range add {
		if e.Gen != gen || e.size() > maxBytes {
			continue
		}
		if canonEntry(&e) != nil {
			continue
		}
		key, _ := CanonicalInput(e.Args, nil) // the same input spelled otherwise is kept once
		i := 0
		for i < len(out) && !sameInput(out[i].Args, key) {
			i++
		}
		if i < len(out) {
			if bytes.Equal(out[i].Value, e.Value) && out[i].Err == e.Err {
				continue // kept already with the same answer: nothing to write
			}
			out = append(out[:i], out[i+1:]...)
		}
		out = append(out, e)
		changed = true
	}
	total := 0
	for _, e := range out {
		total += e.size()
	}
	for len(out) > max || total > maxBytes {
		total -= out[0].size()
		out = out[1:]
		changed = true
	}
	if len(out) == 0 {
		out = nil
	}
	return out, changed
}

// CanonicalInput is args as one text per input the code gets: canonical JSON (keys sorted, a
// repeated key the last one, strings unescaped) with every number written one way (an integer in
// decimal, any other as the shortest float64 text, -0 as 0), and, given the parameters' names,
// args by position named. One input then cannot pass for many ({"b":0,"a":1}, [1,-0], 1.0 and
// 10e-1 for a float): the health rule counts it once (forge's input tags) and the sample keeps it
// once.
func CanonicalInput(args []byte, params []string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if a, ok := v.([]any); ok && len(params) > 0 && len(a) <= len(params) {
		m := make(map[string]any, len(a))
		for i, x := range a {
			m[params[i]] = x
		}
		v = m
	}
	var buf bytes.Buffer
	writeCanonical(&buf, canonicalNumbers(v))
	return buf.Bytes(), nil
}

// canonicalNumbers writes every number of v one way (CanonicalInput).
func canonicalNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return json.Number(strconv.FormatInt(i, 10))
		}
		if f, err := x.Float64(); err == nil {
			return json.Number(strconv.FormatFloat(f+0, 'g', -1, 64)) // +0: -0 is 0
		}
	case []any:
		for i := range x {
			x[i] = canonicalNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = canonicalNumbers(x[k])
		}
	}
	return v
}

// sameInput reports whether kept args are the input of key (CanonicalInput's).
func sameInput(args, key []byte) bool {
	k, err := CanonicalInput(args, nil)
	return err == nil && bytes.Equal(k, key)
}

// canonEntry rewrites e's args and value as canonical JSON (a store may have indented them).
func canonEntry(e *SampleEntry) error {
	args, err := CanonicalJSON(e.Args)
	if err != nil {
		return err
	}
	e.Args = args
	if len(e.Value) > 0 {
		v, err := CanonicalJSON(e.Value)
		if err != nil {
			return err
		}
		e.Value = v
	}
	return nil
}

// Canonical is e with its args and value as canonical JSON (a directory store indents them in
// its file); e itself when they are not JSON.
func (e SampleEntry) Canonical() SampleEntry {
	c := e
	if canonEntry(&c) != nil {
		return e
	}
	return c
}

// SampleBytes is the size of the sample's args, answers and errors as canonical JSON: what its
// bounds count.
func SampleBytes(s []SampleEntry) int {
	n := 0
	for _, e := range s {
		n += e.Canonical().size()
	}
	return n
}

// ReplaySummary is what a generation's replay of its predecessor's sample found.
type ReplaySummary struct {
	Replayed    int `json:"replayed"`
	Same        int `json:"same"`
	Fixed       int `json:"fixed,omitempty"`        // the failing call's input now answers
	NowSucceeds int `json:"now_succeeds,omitempty"` // an answer that was an error now is a value
	Changed     int `json:"changed,omitempty"`      // an answer that differs (or now fails)
	// Accepted: an operator accepted the changed answers (--accept-changes).
	Accepted bool `json:"accepted,omitempty"`
}

package forge

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
)

func TestOutcomeAppendJSONMatchesEncodingJSON(t *testing.T) {
	warm := Outcome{OK: true, Value: json.RawMessage(`"HELLO"`), Meta: Meta{ProgramSource: SourcePersisted, ArtifactGen: 3, Duration: 4321, Decision: "execute:healthy"}}
	for name, o := range map[string]Outcome{
		"zero":              {},
		"warm":              warm,
		"object":            {OK: true, Value: json.RawMessage(`{"a":[1,2.5,null,true],"b":{"c":"d"}}`), Meta: Meta{Duration: 1}},
		"html":              {OK: true, Value: json.RawMessage(`"<b>&</b>"`)},
		"spaces":            {OK: true, Value: json.RawMessage("{ \"a\" :\n 1 }")},
		"line sep":          {OK: true, Value: json.RawMessage("\"a\u2028b\"")},
		"unicode":           {OK: true, Value: json.RawMessage(`"é"`), Meta: Meta{Logs: []string{"plain", `quote " é <x>`, "tab\t"}}},
		"error":             {Err: &Error{Type: "panic", Class: "intrinsic", Rule: "panic", Message: `index out of range [3] with length 2 <"x">`, Retriable: false}, Meta: Meta{ProgramSource: SourceGenerated, ProviderCalls: 2, Tokens: provider.Usage{InputTokens: 100, CachedTokens: 7}}},
		"error norule":      {Err: &Error{Type: "args", Class: "caller", Message: "m", Retriable: true}},
		"error retry after": {Err: &Error{Type: "model_calls", Class: "caller", Rule: "model_calls", Message: "m", RetryAfter: 90 * time.Second}},
		"every flag":        {OK: true, Value: json.RawMessage(`1`), Meta: Meta{RepairAttempted: true, RepairSucceeded: true, Joined: true, Unchanged: true, Tokens: provider.Usage{OutputTokens: 5}}},
		"replay":            {OK: true, Meta: Meta{Replay: &Replay{}}},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal((*outcomeDoc)(&o))
			require.NoError(t, err)
			got, err := o.AppendJSON([]byte("prefix"))
			require.NoError(t, err)
			assert.Equal(t, "prefix"+string(want), string(got))
			// What the server wrote before: a json.Encoder's document, less its newline.
			var enc bytes.Buffer
			require.NoError(t, json.NewEncoder(&enc).Encode((*outcomeDoc)(&o)))
			assert.Equal(t, strings.TrimSuffix(enc.String(), "\n"), string(got[len("prefix"):]))
		})
	}
	bad := Outcome{OK: true, Value: json.RawMessage(`{"a":`)}
	_, err := bad.AppendJSON(nil)
	assert.Error(t, err, "a value that is not JSON is refused, as encoding/json refuses it")
}

// TestOutcomeAppendJSONKnowsEveryField fails when Outcome, Error, Meta or provider.Usage gain or
// lose a JSON field: AppendJSON writes them by hand and must be told (then add the field to the
// table of TestOutcomeAppendJSONMatchesEncodingJSON too).
func TestOutcomeAppendJSONKnowsEveryField(t *testing.T) {
	known := map[reflect.Type]string{
		reflect.TypeFor[Outcome]():        "ok value error meta",
		reflect.TypeFor[Error]():          "type class rule message retriable retry_after",
		reflect.TypeFor[Meta]():           "program_source artifact_gen duration provider_calls tokens decision repair_attempted repair_succeeded logs joined unchanged replay",
		reflect.TypeFor[provider.Usage](): "input_tokens output_tokens cached_tokens",
	}
	for typ, want := range known {
		var got []string
		for i := range typ.NumField() {
			tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			got = append(got, tag)
		}
		assert.Equal(t, want, strings.Join(got, " "), "%s's JSON fields changed: update Outcome.AppendJSON", typ)
	}
}

// BenchmarkOutcomeJSON is a warm call's Outcome written by AppendJSON and by encoding/json, in
// the same run.
func BenchmarkOutcomeJSON(b *testing.B) {
	o := Outcome{OK: true, Value: json.RawMessage(`"HELLO"`), Meta: Meta{ProgramSource: SourcePersisted, ArtifactGen: 1, Duration: 4*time.Microsecond + 321, Decision: "execute:healthy"}}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = o.AppendJSON(buf[:0])
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			json.NewEncoder(&buf).Encode((*outcomeDoc)(&o))
		}
	})
}

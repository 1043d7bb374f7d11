// Package replay answers generation requests from a cassette of recorded answers, so tests,
// demos and baselines run the whole forge lifecycle with no model and no network.
//
// A cassette is JSON Lines, one answer per line, keyed by role, method, kind and attempt:
//
//	{"role":"text","method":"upper","kind":"generate","attempt":1,"code":"package artifact\n..."}
//	{"role":"text","method":"upper","kind":"repair","attempt":1,"raw":"Fixed:\n```go\n...\n```"}
//	{"role":"text","method":"lower","kind":"generate","attempt":1,"error":"rate_limited","retry_after_ms":2000}
//
// "code" is used verbatim; "raw" is a whole model answer that goes through provider.Heal like a
// live one; "error" (unavailable, rate_limited, bad_answer, auth, config) simulates a provider
// failure. Optional "model" and "usage" ({"input_tokens":…,"output_tokens":…,"cached_tokens":…})
// are reported in the Answer. Blank lines and lines starting with # are skipped.
//
// A line is found in one of two ways:
//
//   - by question: a line with "question" (QuestionOf the request: a digest of its kind, role,
//     method and prompt, which holds the code being repaired and the feedback of the call's earlier
//     attempts) answers exactly that question, in any process and in any order. Its "attempt" is
//     the attempt within the forge call (1..n) it was recorded at, for the reader.
//   - in order: the n-th request of a kind for a role+method that no question line answers gets
//     the line with attempt n and no question. The cassette counts these requests itself, per
//     role+method+kind, concurrency-safe, so the order holds within one process only.
//
// Request.Attempt is the attempt within one forge call; it never picks an ordered line (the same
// call attempt 1 happens once per call). A request no line answers gets an error naming its
// question, ready to be recorded.
package replay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/artifactforge/forge/internal/storepath"
	"github.com/artifactforge/forge/provider/internal/gen"
)

// Name is the provider's name in specs, errors and events.
const Name = "replay"

// Line is one recorded answer as it appears in the cassette.
type Line struct {
	Role         string        `json:"role"`
	Method       string        `json:"method"`
	Kind         gen.Kind      `json:"kind"`
	Attempt      int           `json:"attempt"`
	Question     string        `json:"question,omitempty"`
	Code         string        `json:"code,omitempty"`
	Raw          string        `json:"raw,omitempty"`
	Error        gen.ErrorKind `json:"error,omitempty"`
	Message      string        `json:"message,omitempty"`
	RetryAfterMS int           `json:"retry_after_ms,omitempty"`
	Model        string        `json:"model,omitempty"`
	Usage        *gen.Usage    `json:"usage,omitempty"`

	n int // line number in the cassette
}

type key struct {
	role, method string
	kind         gen.Kind
}

type slot struct {
	key
	attempt  int
	question string // set for question lines, which the attempt does not key
}

// Cassette is a replay provider. It is safe for concurrent use.
type Cassette struct {
	source  string // path or name, for messages
	answers map[slot]Line

	mu     sync.Mutex
	counts map[key]int
}

// Open reads the cassette at path.
func Open(path string) (*Cassette, error) {
	// Its answers are the code forge verifies and runs: refused, as a store file, when every user
	// may write it or its directory.
	data, err := storepath.ReadRegular(path, "read a cassette from")
	if err != nil {
		return nil, &gen.Error{Kind: gen.Misconfigured, Provider: Name, Message: "cannot read cassette (use --provider replay:PATH with a JSON Lines file)", Err: err}
	}
	return New(path, data)
}

// New parses a cassette held in memory (the demo embeds one in the binary); source names it
// in messages. Malformed lines are reported with their line number.
func New(source string, data []byte) (*Cassette, error) {
	c := &Cassette{source: source, answers: map[slot]Line{}, counts: map[key]int{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l, err := parseLine([]byte(text))
		if err != nil {
			return nil, c.lineError(n, err)
		}
		l.n = n
		s := slot{key{l.Role, l.Method, l.Kind}, l.Attempt, ""}
		if l.Question != "" {
			s = slot{key{l.Role, l.Method, l.Kind}, 0, l.Question}
		}
		if prev, dup := c.answers[s]; dup {
			if l.Question != "" {
				return nil, c.lineError(n, fmt.Errorf("duplicate answer for %s question %s (first on line %d)", s.name(), l.Question, prev.n))
			}
			return nil, c.lineError(n, fmt.Errorf("duplicate answer for %s attempt %d (first on line %d)", s.name(), l.Attempt, prev.n))
		}
		c.answers[s] = l
	}
	if err := sc.Err(); err != nil {
		return nil, c.lineError(n+1, err)
	}
	return c, nil
}

func parseLine(text []byte) (Line, error) {
	var l Line
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return l, fmt.Errorf("not a JSON answer object: %w", err)
	}
	if dec.More() {
		return l, fmt.Errorf("more than one JSON value on the line")
	}
	switch {
	case l.Role == "" || l.Method == "":
		return l, fmt.Errorf(`"role" and "method" are required`)
	case !l.Kind.Valid():
		return l, fmt.Errorf(`"kind" must be "generate" or "repair", not %q`, l.Kind)
	case l.Attempt < 1:
		return l, fmt.Errorf(`"attempt" must be 1 or more, not %d`, l.Attempt)
	case l.Error != "" && !l.Error.Valid():
		return l, fmt.Errorf(`"error" must be one of unavailable, rate_limited, bad_answer, auth, config, not %q`, l.Error)
	case l.RetryAfterMS < 0:
		return l, fmt.Errorf(`"retry_after_ms" must not be negative`)
	}
	set := 0
	for _, s := range []bool{l.Code != "", l.Raw != "", l.Error != ""} {
		if s {
			set++
		}
	}
	if set != 1 {
		return l, fmt.Errorf(`exactly one of "code", "raw" or "error" is required`)
	}
	return l, nil
}

func (c *Cassette) lineError(n int, err error) error {
	return &gen.Error{Kind: gen.Misconfigured, Provider: Name, Message: fmt.Sprintf("cassette %s:%d", c.source, n), Err: err}
}

func (s slot) name() string {
	return fmt.Sprintf("%s.%s %s", s.role, s.method, s.kind)
}

// QuestionOf is the digest a question line answers: sha256 of the request's kind, role, method
// and prompt (the system part is left out: it names the sandbox's rules, not the question), 16 hex
// digits.
func QuestionOf(req gen.Request) string {
	h := sha256.New()
	for _, p := range []string{string(req.Kind), req.Role, req.Method, req.Prompt} {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Name reports "replay".
func (c *Cassette) Name() string { return Name }

// Len is the number of recorded answers.
func (c *Cassette) Len() int { return len(c.answers) }

// Reset forgets the request counts, so the cassette replays from attempt 1 again.
func (c *Cassette) Reset() {
	c.mu.Lock()
	clear(c.counts)
	c.mu.Unlock()
}

// Generate returns the recorded answer for the request's role, method, kind and attempt.
func (c *Cassette) Generate(ctx context.Context, req gen.Request) (gen.Answer, error) {
	if err := ctx.Err(); err != nil {
		return gen.Answer{}, gen.TransportError(Name, err)
	}
	k := key{req.Role, req.Method, req.Kind}
	q := QuestionOf(req)
	l, ok := c.answers[slot{k, 0, q}]
	if !ok {
		c.mu.Lock()
		c.counts[k]++
		n := c.counts[k]
		c.mu.Unlock()
		s := slot{k, n, ""}
		if l, ok = c.answers[s]; !ok {
			return gen.Answer{}, &gen.Error{Kind: gen.Misconfigured, Provider: Name,
				Message: fmt.Sprintf("no cassette answer for %s attempt %d (call attempt %d, question %s) in %s: add a line with \"question\":%q to answer this request in any process",
					s.name(), n, req.Attempt, q, c.source, q)}
		}
	}
	ans := gen.Answer{Model: l.Model, Raw: l.Raw}
	if ans.Model == "" {
		ans.Model = Name
	}
	if l.Usage != nil {
		ans.Usage = *l.Usage
	}
	where := fmt.Sprintf("%s:%d", c.source, l.n)
	switch {
	case l.Error != "":
		msg := l.Message
		if msg == "" {
			msg = "simulated failure"
		}
		return ans, &gen.Error{Kind: l.Error, Provider: Name, RetryAfter: time.Duration(l.RetryAfterMS) * time.Millisecond,
			Message: fmt.Sprintf("%s (%s)", msg, where)}
	case l.Raw != "":
		code, err := gen.Heal(l.Raw)
		if err != nil {
			return ans, &gen.Error{Kind: gen.BadAnswer, Provider: Name, Message: where, Err: err}
		}
		ans.Code = code
	default:
		ans.Code, ans.Raw = l.Code, l.Code
	}
	return ans, nil
}

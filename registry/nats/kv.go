package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/artifactforge/forge/registry"
)

// Errors of the KV layer. A missing key is registry.ErrNotFound, so the store interface can map
// both backends the same way.
var (
	// ErrConflict: a compare-and-set lost to another writer (Delete with a stale revision, or an
	// Update that kept losing for MaxUpdateAttempts attempts).
	ErrConflict = errors.New("revision conflict")
	// ErrExists: Create found the key already there.
	ErrExists = errors.New("already exists")
)

// EscapeToken turns any non-empty name into one KV key token (no dots): lower-case letters,
// digits, _ and - stay as they are (so every registry.ValidateName name is its own token); every
// other byte becomes =XX (upper-case hex). The mapping is one-to-one: UnescapeToken inverts it.
func EscapeToken(name string) (string, error) {
	if name == "" {
		return "", errors.New("nats: an empty name cannot be a key")
	}
	clean := true
	for i := 0; i < len(name); i++ {
		if !plainKeyByte(name[i]) {
			clean = false
			break
		}
	}
	if clean {
		return name, nil
	}
	var b strings.Builder
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(name); i++ {
		c := name[i]
		if plainKeyByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('=')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String(), nil
}

func plainKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// UnescapeToken inverts EscapeToken.
func UnescapeToken(tok string) (string, error) {
	if !strings.Contains(tok, "=") {
		return tok, nil
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c != '=' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(tok) {
			return "", fmt.Errorf("nats: key token %q: truncated escape", tok)
		}
		hi, lo := unhex(tok[i+1]), unhex(tok[i+2])
		if hi < 0 || lo < 0 {
			return "", fmt.Errorf("nats: key token %q: bad escape", tok)
		}
		b.WriteByte(byte(hi<<4 | lo))
		i += 2
	}
	return b.String(), nil
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Entry is one decoded value with its revision (the stream sequence of the write: a fencing
// token and the compare-and-set handle).
type Entry[T any] struct {
	Value    T
	Revision uint64
	Created  time.Time
}

// Codec encodes and decodes one value type.
type Codec[T any] struct {
	Encode func(T) ([]byte, error)
	Decode func([]byte) (T, error)
}

// JSONCodec is encoding/json for T.
func JSONCodec[T any]() Codec[T] {
	return Codec[T]{
		Encode: func(v T) ([]byte, error) { return json.Marshal(v) },
		Decode: func(b []byte) (T, error) {
			var v T
			err := json.Unmarshal(b, &v)
			return v, err
		},
	}
}

// Table is a typed view of the keys under one prefix of a KV bucket.
type Table[T any] struct {
	kv     jetstream.KeyValue
	prefix string // "roles." etc.; keys are prefix + escaped tokens joined by dots
	codec  Codec[T]
}

// NewTable is a typed view of kv's keys under prefix (a dot-terminated key prefix, or "").
func NewTable[T any](kv jetstream.KeyValue, prefix string, codec Codec[T]) *Table[T] {
	return &Table[T]{kv: kv, prefix: prefix, codec: codec}
}

// Key is the bucket key of the name made of parts (each escaped into one token).
func (t *Table[T]) Key(parts ...string) (string, error) {
	var b strings.Builder
	b.WriteString(t.prefix)
	for i, p := range parts {
		tok, err := EscapeToken(p)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String(), nil
}

// Parts inverts Key: the unescaped parts of a bucket key of this table.
func (t *Table[T]) Parts(key string) ([]string, bool) {
	rest, ok := strings.CutPrefix(key, t.prefix)
	if !ok || rest == "" {
		return nil, false
	}
	toks := strings.Split(rest, ".")
	for i, tok := range toks {
		p, err := UnescapeToken(tok)
		if err != nil {
			return nil, false
		}
		toks[i] = p
	}
	return toks, true
}

// Get returns the value of key with its revision. A missing or deleted key is registry.ErrNotFound
// (with the delete's revision in the entry, if it was deleted).
//
// Get may be served by any replica of the bucket (JetStream KV allows direct gets), so in a cluster
// it can lag the latest write by the replication delay: it is the cheap read. GetAtLeast waits for
// a known revision; every write (Update, Create, Delete at a revision) is checked by the stream
// leader, so a stale read can cost a retry but never an update.
func (t *Table[T]) Get(ctx context.Context, key string) (Entry[T], error) {
	e, err := t.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		var rev uint64
		if e != nil {
			rev = e.Revision() // the delete marker's
		}
		return Entry[T]{Revision: rev}, fmt.Errorf("nats: %s/%s: %w", t.kv.Bucket(), key, registry.ErrNotFound)
	}
	if err != nil {
		return Entry[T]{}, fmt.Errorf("nats: get %s/%s: %w (is the NATS server reachable?)", t.kv.Bucket(), key, err)
	}
	return t.decode(key, e)
}

// decode is the value of one entry of key as Get returns it (a bulk read decodes the same way).
func (t *Table[T]) decode(key string, e jetstream.KeyValueEntry) (Entry[T], error) {
	v, err := t.codec.Decode(e.Value())
	if err != nil {
		if errors.Is(err, registry.ErrCorrupt) || errors.Is(err, registry.ErrIncompatible) {
			return Entry[T]{Value: v, Revision: e.Revision()}, fmt.Errorf("nats: %s/%s revision %d: %w", t.kv.Bucket(), key, e.Revision(), err)
		}
		return Entry[T]{}, fmt.Errorf("nats: %s/%s revision %d: %w: %v", t.kv.Bucket(), key, e.Revision(), registry.ErrCorrupt, err)
	}
	return Entry[T]{Value: v, Revision: e.Revision(), Created: e.Created()}, nil
}

// GetAtLeast is Get from a replica that has applied revision minRev (of this key or a later write
// to the bucket): what a process must use after it learned of a write (a watch Change, its own
// acknowledged write through another connection) to be sure it reads that write or a newer one. It
// polls a lagging replica until ctx ends.
func (t *Table[T]) GetAtLeast(ctx context.Context, key string, minRev uint64) (Entry[T], error) {
	wait := time.Millisecond
	var last uint64 // the newest revision a replica answered with
	behind := func() error {
		return fmt.Errorf("nats: %s/%s: no replica answered with revision %d or later (last seen %d): %w", t.kv.Bucket(), key, minRev, last, ctx.Err())
	}
	for {
		e, err := t.Get(ctx, key)
		if e.Revision >= minRev && (err == nil || errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrCorrupt) || errors.Is(err, registry.ErrIncompatible)) {
			return e, err
		}
		last = max(last, e.Revision)
		if err != nil && !errors.Is(err, registry.ErrNotFound) {
			if ctx.Err() != nil && last > 0 {
				// The wait ran out during a read, after replicas had answered with an older
				// revision: that is what the caller needs to know, not the cut read.
				return Entry[T]{}, behind()
			}
			return e, err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return Entry[T]{}, behind()
		}
		if wait < 50*time.Millisecond {
			wait *= 2
		}
	}
}

// Create writes v only if key does not exist (or was deleted); otherwise ErrExists.
func (t *Table[T]) Create(ctx context.Context, key string, v T) (uint64, error) {
	data, err := t.codec.Encode(v)
	if err != nil {
		return 0, fmt.Errorf("nats: encode %s: %w", key, err)
	}
	rev, err := t.kv.Create(ctx, key, data)
	if errors.Is(err, jetstream.ErrKeyExists) || isRevisionMismatch(err) {
		return 0, fmt.Errorf("nats: create %s/%s: %w", t.kv.Bucket(), key, ErrExists)
	}
	if err != nil {
		return 0, fmt.Errorf("nats: create %s/%s: %w (is the NATS server reachable?)", t.kv.Bucket(), key, err)
	}
	return rev, nil
}

// Put writes v whatever is there (no compare-and-set): only for keys that one writer owns.
func (t *Table[T]) Put(ctx context.Context, key string, v T) (uint64, error) {
	data, err := t.codec.Encode(v)
	if err != nil {
		return 0, fmt.Errorf("nats: encode %s: %w", key, err)
	}
	rev, err := t.kv.Put(ctx, key, data)
	if err != nil {
		return 0, fmt.Errorf("nats: put %s/%s: %w (is the NATS server reachable?)", t.kv.Bucket(), key, err)
	}
	return rev, nil
}

// Delete deletes key if its current revision is rev (0: whatever it is). A newer revision is
// ErrConflict: someone wrote it since it was read.
func (t *Table[T]) Delete(ctx context.Context, key string, rev uint64) error {
	var opts []jetstream.KVDeleteOpt
	if rev > 0 {
		opts = append(opts, jetstream.LastRevision(rev))
	}
	err := t.kv.Delete(ctx, key, opts...)
	if isRevisionMismatch(err) {
		return fmt.Errorf("nats: delete %s/%s at revision %d: %w (it changed since it was read; read it again)", t.kv.Bucket(), key, rev, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("nats: delete %s/%s: %w (is the NATS server reachable?)", t.kv.Bucket(), key, err)
	}
	return nil
}

// ErrNoChange, returned by an Update function, ends the Update without writing and without error.
var ErrNoChange = errors.New("no change")

// Update bounds: at most MaxUpdateAttempts reads and compare-and-sets, sleeping a random time up to
// an exponentially growing bound (updateBackoffMin doubling to updateBackoffMax) between them.
const (
	MaxUpdateAttempts = 32
	updateBackoffMin  = time.Millisecond
	updateBackoffMax  = 100 * time.Millisecond
)

// Update is the compare-and-set read-modify-write of key: fn gets the current value (the zero T and
// exists=false if there is none) and returns the new one; the write succeeds only if nobody wrote
// key in between, else the whole cycle is retried with jittered exponential backoff, at most
// MaxUpdateAttempts times and never past ctx. fn may therefore run several times and must not have
// side effects beyond computing its result (it may return ErrNoChange to write nothing). The
// returned entry is what was written (or, after ErrNoChange, what was read).
func (t *Table[T]) Update(ctx context.Context, key string, fn func(old T, exists bool) (T, error)) (Entry[T], error) {
	backoff := updateBackoffMin
	var minRev uint64 // after a lost compare-and-set: the key is newer than what was read
	for attempt := 1; ; attempt++ {
		var cur Entry[T]
		var err error
		if minRev == 0 {
			cur, err = t.Get(ctx, key)
		} else {
			rctx, cancel := context.WithTimeout(ctx, updateBackoffMax)
			cur, err = t.GetAtLeast(rctx, key, minRev)
			cancel()
			if err != nil && ctx.Err() == nil && !errors.Is(err, registry.ErrNotFound) && errors.Is(err, context.DeadlineExceeded) {
				cur, err = t.Get(ctx, key) // the replica is slow: let the compare-and-set decide
			}
		}
		exists := err == nil
		if err != nil && !errors.Is(err, registry.ErrNotFound) {
			return Entry[T]{}, err
		}
		nv, err := fn(cur.Value, exists)
		if errors.Is(err, ErrNoChange) {
			return cur, nil
		}
		if err != nil {
			return Entry[T]{}, err
		}
		data, err := t.codec.Encode(nv)
		if err != nil {
			return Entry[T]{}, fmt.Errorf("nats: encode %s: %w", key, err)
		}
		var rev uint64
		if exists || cur.Revision > 0 {
			// A deleted key's delete marker has a revision too: the compare-and-set is on it.
			rev, err = t.kv.Update(ctx, key, data, cur.Revision)
		} else {
			rev, err = t.kv.Create(ctx, key, data)
		}
		if err == nil {
			return Entry[T]{Value: nv, Revision: rev, Created: time.Now()}, nil
		}
		if !isRevisionMismatch(err) && !errors.Is(err, jetstream.ErrKeyExists) {
			return Entry[T]{}, fmt.Errorf("nats: update %s/%s: %w (the write may or may not have been applied; read it again)", t.kv.Bucket(), key, err)
		}
		minRev = cur.Revision + 1
		if attempt == MaxUpdateAttempts {
			return Entry[T]{}, fmt.Errorf("nats: update %s/%s: %w: lost %d compare-and-sets in a row to other writers (retry later)", t.kv.Bucket(), key, ErrConflict, attempt)
		}
		sleep := time.Duration(rand.Int64N(int64(backoff))) + backoff/2
		if backoff < updateBackoffMax {
			backoff *= 2
		}
		select {
		case <-time.After(sleep):
		case <-ctx.Done():
			return Entry[T]{}, fmt.Errorf("nats: update %s/%s: %w after %d conflicting attempt(s)", t.kv.Bucket(), key, ctx.Err(), attempt)
		}
	}
}

// List returns the keys of this table (with the given extra key filter after the prefix, e.g.
// "role.*"; "" for all).
func (t *Table[T]) List(ctx context.Context, filter string) ([]string, error) {
	if filter == "" {
		filter = ">"
	}
	l, err := t.kv.ListKeysFiltered(ctx, t.prefix+filter)
	if err != nil {
		return nil, fmt.Errorf("nats: list %s/%s%s: %w", t.kv.Bucket(), t.prefix, filter, err)
	}
	var out []string
	for k := range l.Keys() {
		out = append(out, k)
	}
	return out, nil
}

func isRevisionMismatch(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Package reftab is the table of shared, reference-counted values both machine-code backends
// keep (sandbox/wasm and sandbox/native): a program per code, function and client, made once and
// shared by every Compile of it; an executable image per build key. One place decides how a value
// is shared, when a racing make loses, and when the last release ends it.
package reftab

import (
	"sync"

	"github.com/artifactforge/forge/sandbox"
)

// ProgramKey is the key of a compiled program: programs are shared by code and function, never
// across clients (sandbox.Source.Client), so that each client's program has workers or instances
// of its own.
func ProgramKey(src sandbox.Source) string {
	return src.Checksum() + "\x00" + src.Func + "\x00" + src.Client
}

// Compile is a backend's compile of src: the program already made for its key (ProgramKey) with
// one more reference, or the one create makes from src and the key (which the program's Close
// releases). A closed sandbox makes nothing.
func Compile[P interface {
	comparable
	Close() error
}](t *Table[P], backend string, closed bool, src sandbox.Source, create func(key string) (P, error)) (P, error) {
	if closed {
		var zero P
		return zero, sandbox.Errorf(sandbox.KindInternal, "%s: sandbox closed", backend)
	}
	key := ProgramKey(src)
	return t.Acquire(key, func() (P, error) { return create(key) }, func(p P) { p.Close() })
}

// Table holds values by key, each with the count of references handed out. The zero Table is
// ready to use.
type Table[V comparable] struct {
	mu sync.Mutex
	m  map[string]*slot[V]
}

type slot[V comparable] struct {
	v    V
	refs int
}

// Acquire returns the value under key with one more reference, or creates one (outside the
// table's lock: creates of one key may run at once, as the first calls of one method do). When another
// create of the key registered first, that value is returned with a reference and this one is
// given to discard.
func (t *Table[V]) Acquire(key string, create func() (V, error), discard func(V)) (V, error) {
	if v, ok := t.Get(key); ok {
		return v, nil
	}
	v, err := create()
	if err != nil {
		return v, err
	}
	t.mu.Lock()
	if s := t.m[key]; s != nil {
		s.refs++
		t.mu.Unlock()
		discard(v)
		return s.v, nil
	}
	if t.m == nil {
		t.m = map[string]*slot[V]{}
	}
	t.m[key] = &slot[V]{v: v, refs: 1}
	t.mu.Unlock()
	return v, nil
}

// Get returns the value under key with one more reference (false: none).
func (t *Table[V]) Get(key string) (V, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.m[key]; s != nil {
		s.refs++
		return s.v, true
	}
	var zero V
	return zero, false
}

// Release gives back a reference to v under key. It reports whether that was the last one (v is
// then no longer in the table), or v is not the table's (a make that lost its race, or a value
// of a cleared table): either way the caller ends v.
func (t *Table[V]) Release(key string, v V) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.m[key]
	if s == nil || s.v != v {
		return true
	}
	s.refs--
	if s.refs > 0 {
		return false
	}
	delete(t.m, key)
	return true
}

// Values returns the values the table holds now.
func (t *Table[V]) Values() []V {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.values()
}

func (t *Table[V]) values() []V {
	vs := make([]V, 0, len(t.m))
	for _, s := range t.m {
		vs = append(vs, s.v)
	}
	return vs
}

// Len is how many values the table holds.
func (t *Table[V]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// Clear empties the table and returns what it held; a later Release of any of them reports true.
func (t *Table[V]) Clear() []V {
	t.mu.Lock()
	defer t.mu.Unlock()
	vs := t.values()
	t.m = nil
	return vs
}

package symbols

import (
	"math/rand"
	randv2 "math/rand/v2"
	"sync"
)

// testRand is the top-level math/rand of acceptance tests (the only code math/rand is allowed
// to): a generator of the sandbox's own, not the process's global source. With the host's
// default settings the global functions draw from the runtime's generator and share nothing
// predictable; but a host running with GODEBUG=randautoseed=0 gets a global source seeded with 1
// for its own deterministic use, which test code drawing from it would advance (shifting every
// value the host draws afterwards) and read (the host's next values are then known). Its seed
// comes from math/rand/v2, which never touches math/rand's global source.
var testRand = rand.New(&lockedSource{src: rand.NewSource(randv2.Int64()).(rand.Source64)})

// lockedSource serializes a Source64 for the tests of every interpreter of the process.
type lockedSource struct {
	mu  sync.Mutex
	src rand.Source64
}

func (s *lockedSource) Int63() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Int63()
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Uint64()
}

// Seed does nothing: the table's Seed is a no-op (gen/main.go) and nothing else reaches it.
func (s *lockedSource) Seed(int64) {}

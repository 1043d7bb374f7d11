package difftest

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// refusals collects the cases yaegi refused by name, for the test's log.
type refusals struct {
	mu    *sync.Mutex
	names *[]string
}

func newRefusals() refusals { return refusals{mu: &sync.Mutex{}, names: new([]string)} }

func (r refusals) add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.names = append(*r.names, name)
}

func (r refusals) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), *r.names...)
	sort.Strings(out)
	return out
}

// spent sums the wall time of each placement's answers, for the test's log.
type spent struct {
	mu  *sync.Mutex
	sum map[string]time.Duration
}

func newSpent() spent { return spent{mu: &sync.Mutex{}, sum: map[string]time.Duration{}} }

func (s spent) add(name string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sum[name] += d
}

func (s spent) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for _, name := range []string{"wasm", "inprocess", "worker"} {
		parts = append(parts, fmt.Sprintf("%s %v", name, s.sum[name].Round(time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

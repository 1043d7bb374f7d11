package difftest

import (
	"sort"
	"sync"
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

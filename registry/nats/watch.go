package nats

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/artifactforge/forge/registry"
)

// ChangeKnowledge: a learner domain (knowledge.<domain>) changed.
const ChangeKnowledge registry.ChangeKind = "knowledge"

// Change is one write to the data bucket seen by a Watcher: a role, an artifact or a knowledge
// domain was written or deleted, at Revision.
type Change struct {
	registry.Change
	Domain   string `json:"domain,omitempty"`
	Revision uint64 `json:"revision"`
	Deleted  bool   `json:"deleted,omitempty"`
}

// Watcher turns the data bucket's updates into Changes. It starts at the present (updates only):
// a process reads what it needs lazily and only needs to hear what changes after it started. The
// KV watch rides an ordered consumer, which the client recreates from the last delivered revision
// when its server goes away, so a node failure delays notifications but loses none.
type Watcher struct {
	w       jetstream.KeyWatcher
	cancel  context.CancelFunc
	stopped chan struct{}
	once    sync.Once
}

// Watch calls onChange (on the watcher's goroutine; it must not block for long) for every change
// of a role, an artifact or a knowledge domain made by anyone, this process included, in revision
// order. Keys that do not parse are skipped.
func (s *Store) Watch(ctx context.Context, onChange func(Change)) (*Watcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	kw, err := s.Data.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		cancel()
		return nil, fmt.Errorf("nats: watch %s: %w (is the NATS server reachable?)", s.Data.Bucket(), err)
	}
	w := &Watcher{w: kw, cancel: cancel, stopped: make(chan struct{})}
	go func() {
		defer close(w.stopped)
		for e := range kw.Updates() {
			if e == nil {
				continue // end of the initial values (none with UpdatesOnly)
			}
			c, ok := s.classify(e.Key())
			if !ok {
				continue
			}
			c.Revision = e.Revision()
			c.Deleted = e.Operation() != jetstream.KeyValuePut
			onChange(c)
		}
	}()
	return w, nil
}

// classify maps a data bucket key to its Change.
func (s *Store) classify(key string) (Change, bool) {
	switch {
	case strings.HasPrefix(key, rolesPrefix):
		p, ok := s.Roles.Parts(key)
		if ok && len(p) == 1 {
			return Change{Change: registry.Change{Kind: registry.ChangeRole, Role: p[0]}}, true
		}
	case strings.HasPrefix(key, artifactsPrefix):
		p, ok := s.Artifacts.Parts(key)
		if ok && len(p) == 2 {
			return Change{Change: registry.Change{Kind: registry.ChangeArtifact, Role: p[0], Method: p[1]}}, true
		}
	case strings.HasPrefix(key, knowledgePrefix):
		p, ok := s.Knowledge.Parts(key)
		if ok && len(p) == 1 {
			return Change{Change: registry.Change{Kind: ChangeKnowledge}, Domain: p[0]}, true
		}
	}
	return Change{}, false
}

// Close stops the watcher and waits for its goroutine.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() {
		err = w.w.Stop()
		w.cancel()
		<-w.stopped
	})
	return err
}

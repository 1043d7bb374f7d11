package nats

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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

// Watcher turns the data bucket's updates into Changes. It starts at the present: a process reads
// what it needs lazily and only needs to hear what changes after it started.
//
// It is an ordered pull consumer on the bucket's stream (jetstream.OrderedConsumer), not
// KeyValue.WatchAll: found by TestCluster/NodeKillLosesNoAcknowledgedWrite, the KV watch (a
// push ordered consumer with 5 s heartbeats) went quiet for ~15 s when its server was stopped (2 of
// 3 runs). The pull consumer's 0.5 s heartbeat notices a lost server within about a second; it
// then recreates itself from the last stream sequence it delivered, so every key's newest revision
// arrives (revisions superseded meanwhile are gone from a History-1 bucket and are skipped), but
// the recreation backs off 1 s, 2 s, 4 s... while the stream elects a leader, and the client does
// not always report the reset. So the watcher checks itself: every watchCheck it asks the stream
// for its last sequence, and when it has not delivered what the stream had one check earlier (or
// the stream cannot be asked), it reports a ChangeAll once until it has caught up. The caller then
// drops its whole cache and reads afresh (reads are served by any replica, leader or not) instead
// of trusting a watch that may be behind; a lagging watch costs at most about 2 x watchCheck of
// staleness. The check is one small request per watchCheck per process.
type Watcher struct {
	cc        jetstream.ConsumeContext
	cancel    context.CancelFunc
	once      sync.Once
	errs      atomic.Int64
	behind    atomic.Int64 // times the self-check found the watch behind
	delivered atomic.Uint64
	checkDone chan struct{}
}

// Watch heartbeat: a consumer whose server went away is noticed within about two heartbeats.
const (
	watchHeartbeat = 500 * time.Millisecond
	watchExpiry    = 2 * time.Second
	watchCheck     = 500 * time.Millisecond
)

// Watch calls onChange (one call at a time; it must not block for long) for every change of a
// role, an artifact or a knowledge domain made by anyone, this process included, in revision
// order, and with a registry.ChangeAll when the watch may have fallen behind (its server or
// consumer was lost). Keys that do not parse are skipped.
func (s *Store) Watch(ctx context.Context, onChange func(Change)) (*Watcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	stream := "KV_" + s.Data.Bucket()
	st, err := s.js.Stream(ctx, stream)
	var info *jetstream.StreamInfo
	if err == nil {
		info, err = st.Info(ctx)
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("nats: watch %s: %w (is the NATS server reachable?)", s.Data.Bucket(), err)
	}
	prefix := "$KV." + s.Data.Bucket() + "."
	cons, err := s.js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{prefix + ">"},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    info.State.LastSeq + 1,
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("nats: watch %s: %w (is the NATS server reachable?)", s.Data.Bucket(), err)
	}
	w := &Watcher{cancel: cancel}
	var callMu sync.Mutex // the message and error handlers run on different goroutines
	call := func(c Change) {
		callMu.Lock()
		defer callMu.Unlock()
		onChange(c)
	}
	w.delivered.Store(info.State.LastSeq)
	w.cc, err = cons.Consume(func(m jetstream.Msg) {
		if meta, err := m.Metadata(); err == nil {
			w.delivered.Store(meta.Sequence.Stream)
		}
		key, ok := strings.CutPrefix(m.Subject(), prefix)
		if !ok {
			return
		}
		c, ok := s.classify(key)
		if !ok {
			return
		}
		meta, err := m.Metadata()
		if err != nil {
			return
		}
		c.Revision = meta.Sequence.Stream
		h := m.Headers()
		c.Deleted = h.Get("KV-Operation") != "" || h.Get(jetstream.MarkerReasonHeader) != ""
		call(c)
	}, jetstream.PullHeartbeat(watchHeartbeat), jetstream.PullExpiry(watchExpiry),
		jetstream.ConsumeErrHandler(func(jetstream.ConsumeContext, error) {
			w.errs.Add(1)
			call(Change{Change: registry.Change{Kind: registry.ChangeAll}})
		}))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("nats: watch %s: %w", s.Data.Bucket(), err)
	}
	w.checkDone = make(chan struct{})
	go w.selfCheck(ctx, st, call)
	return w, nil
}

// selfCheck reports a ChangeAll when the watch has not delivered, one check later, what the stream
// had (or when the stream cannot be asked), once until it catches up.
func (w *Watcher) selfCheck(ctx context.Context, st jetstream.Stream, call func(Change)) {
	defer close(w.checkDone)
	t := time.NewTicker(watchCheck)
	defer t.Stop()
	var target uint64 // the stream's last sequence at the previous check
	reported := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, watchCheck)
		info, err := st.Info(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		behind := err != nil || w.delivered.Load() < target
		if err == nil {
			target = info.State.LastSeq
		}
		switch {
		case behind && !reported:
			reported = true
			w.behind.Add(1)
			call(Change{Change: registry.Change{Kind: registry.ChangeAll}})
		case !behind:
			reported = false
		}
	}
}

// Behind is how many times the watcher found itself behind the stream (each reported as one
// ChangeAll).
func (w *Watcher) Behind() int64 { return w.behind.Load() }

// Errors is how many consumer errors (missed heartbeats, recreations) the watcher has seen, each
// reported as a ChangeAll.
func (w *Watcher) Errors() int64 { return w.errs.Load() }

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
	w.once.Do(func() {
		w.cc.Stop()
		<-w.cc.Closed()
		w.cancel()
		<-w.checkDone
	})
	return nil
}

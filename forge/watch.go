package forge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/artifactforge/forge/internal/storepath"
	"github.com/artifactforge/forge/registry"
)

// Live events: what `forge watch`, `forge serve`'s /v1/events and the MCP server's list_changed
// notifications are made of. A LiveEvent is either a call (the same Event the log gets) or a
// change of an artifact or a role seen by the store's watcher (another process blessed,
// quarantined, rolled back, edited or generated something). One Filter serves all three edges.

// Live event kinds.
const (
	LiveCall     = "call"
	LiveArtifact = "artifact"
	LiveRole     = "role"
	// LiveGeneration is a step of a generation this process runs (GenerationStep), for the
	// subscribers of this forge only (it is not in the event log).
	LiveGeneration = "generation"
)

// LiveEvent is one thing that happened, pushed to subscribers as it happens.
type LiveEvent struct {
	Kind     string          `json:"kind"`
	Time     time.Time       `json:"time"`
	Call     *Event          `json:"call,omitempty"`
	Artifact *ArtifactChange `json:"artifact,omitempty"`
	Role     string          `json:"role,omitempty"` // for LiveRole
	// Generation is a LiveGeneration event's step.
	Generation *GenerationStep `json:"generation,omitempty"`
}

// ArtifactChange is an artifact's state before and after a change made by any process.
type ArtifactChange struct {
	Role               string `json:"role"`
	Method             string `json:"method"`
	Lifecycle          string `json:"lifecycle,omitempty"` // empty when Removed
	PreviousLifecycle  string `json:"previous_lifecycle,omitempty"`
	Generation         int    `json:"generation,omitempty"`
	PreviousGeneration int    `json:"previous_generation,omitempty"`
	Trigger            string `json:"trigger,omitempty"` // of the current generation
	Removed            bool   `json:"removed,omitempty"`
	Error              string `json:"error,omitempty"` // the artifact could not be read (quarantined)
}

// Filter selects live events. Role and Method apply to every kind; Class, Source and Trace select
// calls only, so an artifact or role change passes only a filter that sets none of them (a
// generation step passes Trace when it is its call's, and never Class, Source or ChangesOnly).
type Filter struct {
	Role   string `json:"role,omitempty"`
	Method string `json:"method,omitempty"`
	Class  string `json:"class,omitempty"`  // intrinsic, extrinsic, adaptive, caller
	Source string `json:"source,omitempty"` // persisted, generated, repaired, regenerated
	Trace  ID     `json:"trace,omitempty"`
	// ChangesOnly selects artifact and role changes, no calls.
	ChangesOnly bool `json:"changes_only,omitempty"`
	// Viewer is the subscriber's client (WithClient): a generation step's failure text reaches
	// it only from its own calls (StepFor); "" (the operator, a forge without client
	// identities): from every call. Not a selection: every event still passes.
	Viewer string `json:"-"`
}

// Match reports whether e passes the filter.
func (fl Filter) Match(e *LiveEvent) bool {
	var role, method string
	switch {
	case e.Call != nil:
		role, method = e.Call.Role, e.Call.Method
	case e.Artifact != nil:
		role, method = e.Artifact.Role, e.Artifact.Method
	case e.Generation != nil:
		role, method = e.Generation.Role, e.Generation.Method
	default:
		role = e.Role
	}
	if fl.Role != "" && fl.Role != role {
		return false
	}
	if fl.Method != "" && fl.Method != method {
		return false
	}
	if g := e.Generation; g != nil {
		// A step of a call's generation: no change, and no call's class or source yet.
		return !fl.ChangesOnly && fl.Class == "" && fl.Source == "" && (fl.Trace == 0 || fl.Trace == g.TraceID)
	}
	if e.Call == nil {
		return fl.Class == "" && fl.Source == "" && fl.Trace == 0
	}
	if fl.ChangesOnly {
		return false
	}
	c := e.Call
	return (fl.Class == "" || fl.Class == c.FailureClass) &&
		(fl.Source == "" || fl.Source == c.ProgramSource) &&
		(fl.Trace == 0 || fl.Trace == c.TraceID)
}

// liveSubBuffer is each subscriber's queue; a subscriber that falls this far behind loses events
// (counted in Subscription.Dropped and LiveStats) rather than slowing calls down.
const liveSubBuffer = 8192

// Subscription receives live events on C until Close.
type Subscription struct {
	C       <-chan LiveEvent
	c       chan LiveEvent
	filter  Filter
	hub     *liveHub
	dropped atomic.Int64
	once    sync.Once
}

// Dropped is how many events this subscriber lost because it fell behind.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Close ends the subscription; C is closed.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.hub.mu.Lock()
		delete(s.hub.subs, s)
		s.hub.n.Store(int64(len(s.hub.subs) + len(s.hub.observers)))
		s.hub.mu.Unlock()
		close(s.c)
	})
}

// liveHub fans live events out to subscriptions and synchronous observers.
type liveHub struct {
	mu        sync.RWMutex
	subs      map[*Subscription]struct{}
	observers []func(*LiveEvent)
	n         atomic.Int64 // len(subs)+len(observers): publish is free without listeners
	dropped   atomic.Int64

	watchMu sync.Mutex
	watcher io.Closer
	known   map[registry.Key]ArtifactChange // last state seen, to report before/after
}

func (h *liveHub) publish(e *LiveEvent) {
	if h.n.Load() == 0 {
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, o := range h.observers {
		o(e)
	}
	for s := range h.subs {
		if s.filter.Match(e) {
			h.send(s, e)
		}
	}
}

// send queues e for s, or counts it dropped when s has fallen behind.
func (h *liveHub) send(s *Subscription, e *LiveEvent) {
	select {
	case s.c <- *e:
	default:
		s.dropped.Add(1)
		h.dropped.Add(1)
	}
}

func newLiveHub() *liveHub {
	return &liveHub{subs: map[*Subscription]struct{}{}, known: map[registry.Key]ArtifactChange{}}
}

// hub returns the forge's live hub.
func (f *Forge) hub() *liveHub { return f.live }

// publishCall is the event sink Open installs: every call's event goes to the live subscribers.
func (f *Forge) publishCall(h *liveHub, e Event) {
	if h.n.Load() == 0 {
		return // no listener: the warm path allocates nothing here
	}
	h.publishCall(&e)
}

// liveCall is a call's live event for the observers alone, reused (liveCalls).
type liveCall struct {
	le LiveEvent
	ev Event
}

var liveCalls = sync.Pool{New: func() any { return new(liveCall) }}

// publishCall publishes a call's event. The observers (`forge serve`'s metrics) read it during
// their call, so for them it is a reused one; a subscriber keeps what it receives, so one whose
// filter takes calls gets a copy of its own: a warm call under the server (whose MCP subscribes
// to changes only) allocates nothing here.
func (h *liveHub) publishCall(e *Event) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	lc := liveCalls.Get().(*liveCall)
	lc.ev = *e
	lc.le = LiveEvent{Kind: LiveCall, Time: e.Time, Call: &lc.ev}
	for _, o := range h.observers {
		o(&lc.le)
	}
	var kept *LiveEvent
	for s := range h.subs {
		if !s.filter.Match(&lc.le) {
			continue
		}
		if kept == nil {
			c := new(Event)
			*c = *e
			kept = &LiveEvent{Kind: LiveCall, Time: e.Time, Call: c}
		}
		h.send(s, kept)
	}
	*lc = liveCall{} // no strings kept alive in the pool
	liveCalls.Put(lc)
}

// Subscribe returns a subscription to this forge's live events matching fl: its calls and, once
// Watch runs, every artifact and role change made by any process.
func (f *Forge) Subscribe(fl Filter) *Subscription {
	h := f.hub()
	c := make(chan LiveEvent, liveSubBuffer)
	s := &Subscription{C: c, c: c, filter: fl, hub: h}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.n.Store(int64(len(h.subs) + len(h.observers)))
	h.mu.Unlock()
	return s
}

// Observe calls fn synchronously with every live event (metrics); fn must be fast, must not
// block, and must not keep the event (or its Call) past its return: it may be reused.
func (f *Forge) Observe(fn func(*LiveEvent)) {
	h := f.hub()
	h.mu.Lock()
	h.observers = append(h.observers, fn)
	h.n.Store(int64(len(h.subs) + len(h.observers)))
	h.mu.Unlock()
}

// LiveDropped is how many live events subscribers lost by falling behind.
func (f *Forge) LiveDropped() int64 { return f.hub().dropped.Load() }

// Watch makes this forge watch its store (fsnotify): a change another process makes reaches the
// next call at once instead of after the revalidation poll, and is published to subscribers as a
// LiveArtifact or LiveRole event. Without fsnotify it returns the error and the poll remains.
// Close stops it. Calling Watch again is a no-op.
func (f *Forge) Watch() error {
	h := f.hub()
	h.watchMu.Lock()
	defer h.watchMu.Unlock()
	if h.watcher != nil {
		return nil
	}
	// Remember what is there now, so that the first change reports its before state.
	if keys, err := f.store.List(); err == nil {
		for _, k := range keys {
			if a, err := f.store.Load(k.Role, k.Method); err == nil {
				h.known[k] = artifactState(a)
			}
		}
	}
	w, err := f.store.Watch(func(batch []registry.Change) { f.onStoreChange(h, batch) })
	if err != nil {
		return fmt.Errorf("forge: %w", err)
	}
	h.watcher = w
	return nil
}

func artifactState(a *registry.Artifact) ArtifactChange {
	c := ArtifactChange{Role: a.Role, Method: a.Method, Lifecycle: string(a.Lifecycle), Generation: a.Generation}
	if len(a.History) > 0 {
		c.Trigger = a.History[0].Trigger
	}
	return c
}

// onStoreChange turns a batch of store changes into live events.
func (f *Forge) onStoreChange(h *liveHub, batch []registry.Change) {
	if h.n.Load() == 0 {
		return // nobody listens: the cache was invalidated, and nothing needs to be read
	}
	now := f.now().UTC()
	for _, c := range batch {
		switch c.Kind {
		case registry.ChangeRole:
			h.publish(&LiveEvent{Kind: LiveRole, Time: now, Role: c.Role})
		case registry.ChangeArtifact:
			f.publishArtifact(h, registry.Key{Role: c.Role, Method: c.Method}, now)
		case registry.ChangeAll:
			keys, _ := f.store.List()
			seen := map[registry.Key]bool{}
			for _, k := range keys {
				seen[k] = true
				f.publishArtifact(h, k, now)
			}
			h.watchMu.Lock()
			var gone []registry.Key
			for k := range h.known {
				if !seen[k] {
					gone = append(gone, k)
				}
			}
			h.watchMu.Unlock()
			for _, k := range gone {
				f.publishArtifact(h, k, now)
			}
			h.publish(&LiveEvent{Kind: LiveRole, Time: now})
		}
	}
}

// publishArtifact reads k's artifact (a complete file: writes are renames) and publishes its
// change, unless nothing a subscriber sees changed (a metrics flush, a flush of the sample of
// real calls: only its generation, lifecycle or readability make a change).
func (f *Forge) publishArtifact(h *liveHub, k registry.Key, now time.Time) {
	a, err := f.store.Load(k.Role, k.Method)
	var cur ArtifactChange
	switch {
	case err == nil:
		cur = artifactState(a)
	case errors.Is(err, registry.ErrNotFound):
		cur = ArtifactChange{Role: k.Role, Method: k.Method, Removed: true}
	default:
		cur = ArtifactChange{Role: k.Role, Method: k.Method, Error: err.Error()}
	}
	h.watchMu.Lock()
	prev, had := h.known[k]
	if cur.Removed {
		delete(h.known, k)
	} else {
		h.known[k] = cur
	}
	h.watchMu.Unlock()
	if had && prev.Lifecycle == cur.Lifecycle && prev.Generation == cur.Generation && prev.Error == cur.Error {
		return
	}
	if !had && cur.Removed {
		return
	}
	cur.PreviousLifecycle, cur.PreviousGeneration = prev.Lifecycle, prev.Generation
	h.publish(&LiveEvent{Kind: LiveArtifact, Time: now, Artifact: &cur})
}

// stopWatch ends Watch and every subscription (Close).
func (f *Forge) stopWatch() {
	h := f.live
	h.watchMu.Lock()
	w := h.watcher
	h.watcher = nil
	h.watchMu.Unlock()
	if w != nil {
		w.Close()
	}
	h.mu.Lock()
	subs := make([]*Subscription, 0, len(h.subs))
	for s := range h.subs {
		subs = append(subs, s)
	}
	h.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
}

// TailEvents follows a store's event log (events/forge.jsonl) as other processes append to it, and
// calls fn with every new call event, from the end of the log at the time of the call on: fsnotify
// tells when lines were written (push, not a poll), only complete lines are decoded, and a rotated
// log is followed to its new file. It returns when ctx is done.
func TailEvents(ctx context.Context, store string, fn func(Event)) error {
	return TailEventsReady(ctx, store, nil, fn)
}

// TailEventsReady is TailEvents that calls ready (when not nil) once, as soon as the tail is
// watching the log from its end: an event written after ready returns is delivered. Code that
// starts a tail and then acts waits for ready instead of sleeping.
func TailEventsReady(ctx context.Context, store string, ready func(), fn func(Event)) error {
	dir := filepath.Join(store, "events")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("forge: events: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("forge: watch %s: %w", dir, err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("forge: watch %s: %w", dir, err)
	}
	path := filepath.Join(dir, "forge.jsonl")
	var file *os.File
	var rd *bufio.Reader
	var partial []byte
	var cur os.FileInfo
	// open makes the file now at path the one read; false, with the one being read kept, when
	// there is none (the writer is between renaming the full log and creating the next). Keeping
	// it keeps cur: a catch-up must start from the file read last, or it reads the rotated
	// files twice (seen under load: the same events delivered again).
	open := func(fromEnd bool) bool {
		fh, err := storepath.OpenRegular(path, "follow events in")
		if err != nil {
			return false
		}
		if file != nil {
			file.Close()
		}
		if fromEnd {
			fh.Seek(0, io.SeekEnd)
		}
		file, rd, partial = fh, bufio.NewReaderSize(fh, 64<<10), nil
		cur, _ = fh.Stat()
		return true
	}
	drain := func() {
		if file == nil {
			return
		}
		for {
			line, err := rd.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				partial = append(partial, line...)
				continue
			}
			if err != nil {
				partial = append(partial, line...) // an incomplete last line: wait for the rest
				return
			}
			if len(partial) > 0 {
				line = append(partial, line...)
				partial = nil
			}
			var e Event
			if json.Unmarshal(line, &e) == nil {
				fn(e)
			}
		}
	}
	open(true)
	if file == nil {
		cur = nil
	}
	// follow reads what was appended, and follows a rotation.
	follow := func() {
		drain()
		if fi, err := os.Stat(path); err == nil && (file == nil || cur == nil || !os.SameFile(fi, cur)) {
			// The log was rotated, maybe several times since the last event: open the new
			// log first, then read whole the rotated files that came after the one being
			// read (found by identity, not by name: names shift with every rotation).
			drain() // the old file is complete now (the writer closes it before renaming it)
			prev := cur
			if open(false) && prev != nil {
				catchUp(path, prev, cur, fn)
			}
			drain()
		}
	}
	if ready != nil {
		ready()
	}
	for {
		select {
		case <-ctx.Done():
			if file != nil {
				file.Close()
			}
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if !strings.HasPrefix(filepath.Base(ev.Name), "forge.jsonl") {
				continue
			}
			follow()
		case <-w.Errors:
			follow() // an overflowed queue lost events of the directory: look at it anyway
		}
	}
}

// catchUp reads whole the rotated logs (path.1 ... path.N, newest first by name) that are newer
// than prev (the file the tail was reading) and older than now (the file it reads next), oldest
// first. Files are opened before they are identified, so a rotation during the scan cannot make
// one name stand for two files.
func catchUp(path string, prev, now os.FileInfo, fn func(Event)) {
	type rotated struct {
		f  *os.File
		fi os.FileInfo
	}
	var files []rotated
	for i := 1; i <= eventLogKeep; i++ {
		f, err := storepath.OpenRegular(fmt.Sprintf("%s.%d", path, i), "follow events in")
		if err != nil {
			continue
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil {
			files = append(files, rotated{f, fi})
		}
	}
	k := -1 // index of prev: everything before it (and after now) is newer
	for i, r := range files {
		if os.SameFile(r.fi, prev) {
			k = i
			break
		}
	}
	if k < 0 {
		k = len(files) // prev is gone (the tail fell further behind than the kept files)
	}
	// now, the file just opened at path, may itself have been rotated since: then only the files
	// between prev and now are read here; the ones after now come with the next catch-up, after
	// now is read (reading them first delivered events out of order, seen under load).
	stop := -1
	for i := k - 1; i >= 0; i-- {
		if now != nil && os.SameFile(files[i].fi, now) {
			stop = i
			break
		}
	}
	for i := k - 1; i > stop; i-- {
		sc := bufio.NewScanner(files[i].f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var e Event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				fn(e)
			}
		}
	}
}

package forge

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/artifactforge/forge/registry"
)

// The sample of real calls (safe regeneration): each artifact keeps a bounded sample of recent
// distinct inputs with the answers its current generation gave (registry.SampleEntry), which new
// code replays before it is promoted (shadow.go). A call offers its input off the warm path's
// critical work: a length check while the artifact's sample is short, one random draw once it is
// full, a copy into a bounded channel only for the calls that are kept; a background flush merges
// them into the store (registry.MergeSample) the way the metrics recorder does.

const (
	// DefaultSampleEvery: once an artifact's sample is full, one call in this many offers its
	// input (Options.SampleEvery).
	DefaultSampleEvery = 64
	// DefaultSampleFlushInterval is how often offered inputs are merged into the store
	// (Options.SampleFlushInterval).
	DefaultSampleFlushInterval = 10 * time.Second
	// sampleQueue bounds the inputs waiting for a flush; more are dropped.
	sampleQueue = 256
)

type sampleItem struct {
	role, method string
	entry        registry.SampleEntry
}

// sampler buffers offered inputs and merges them into the store every interval.
type sampler struct {
	every int
	ch    chan sampleItem
	flush func([]sampleItem)

	mu   sync.Mutex // one flush at a time
	stop chan struct{}
	done chan struct{}
}

func newSampler(every int, interval time.Duration, flush func([]sampleItem)) *sampler {
	if every < 0 {
		return nil // sampling off for this process
	}
	if every == 0 {
		every = DefaultSampleEvery
	}
	if interval <= 0 {
		interval = DefaultSampleFlushInterval
	}
	s := &sampler{every: every, ch: make(chan sampleItem, sampleQueue), flush: flush, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.drain()
			case <-s.stop:
				return
			}
		}
	}()
	return s
}

// offer is a call's input and answer (value, or the message of an intrinsic failure): kept in
// the queue when the artifact's sample is short, or by one draw in every once it is full.
// client is the call's client (ClientFrom; "" for none), which the entry remembers.
func (s *sampler) offer(cfg *registry.SampleConfig, art *registry.Artifact, gen int, role, method, client string, args, value json.RawMessage, errMsg string) {
	if s == nil || gen == 0 || (cfg != nil && cfg.Off) {
		return
	}
	if max, _ := cfg.Bounds(); len(art.Sample) >= max && (s.every > 1 && rand.IntN(s.every) != 0) {
		return
	}
	if len(s.ch) == cap(s.ch) {
		return
	}
	if args == nil {
		args = json.RawMessage("null")
	}
	it := sampleItem{role: role, method: method, entry: registry.SampleEntry{Args: append(json.RawMessage(nil), args...),
		Value: append(json.RawMessage(nil), value...), Err: errMsg, Gen: gen, At: time.Now().UTC(), Client: client}}
	select {
	case s.ch <- it:
	default:
	}
}

// drain flushes what is queued now.
func (s *sampler) drain() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var items []sampleItem
	for {
		select {
		case it := <-s.ch:
			items = append(items, it)
			continue
		default:
		}
		break
	}
	if len(items) > 0 {
		s.flush(items)
	}
}

func (s *sampler) close() {
	if s == nil {
		return
	}
	close(s.stop)
	<-s.done
	s.drain()
}

// OpPurgeSample is the operator action that drops an artifact's sample (`forge sample purge`).
const OpPurgeSample = "purge_sample"

// errSampleSame aborts a sample merge that would write nothing new.
var errSampleSame = errors.New("sample unchanged")

// flushSamples merges offered inputs into their artifacts, one store update per artifact. An
// input of a generation that is no longer current is dropped (registry.MergeSample); a role that
// turned its sample off has it purged.
func (f *Forge) flushSamples(items []sampleItem) {
	byKey := map[registry.Key][]registry.SampleEntry{}
	var keys []registry.Key
	for _, it := range items {
		k := registry.Key{Role: it.role, Method: it.method}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], it.entry)
	}
	for _, k := range keys {
		var cfg *registry.SampleConfig
		if rec, err := f.store.Role(k.Role); err == nil {
			cfg = rec.Sample
		}
		max, maxBytes := cfg.Bounds()
		_, _ = f.store.Update(k.Role, k.Method, func(a *registry.Artifact, exists bool) error {
			if !exists {
				return registry.ErrNotFound
			}
			s, changed := registry.MergeSample(a.Sample, byKey[k], a.Generation, max, maxBytes)
			if !changed {
				return errSampleSame
			}
			a.Sample = s
			return nil
		})
	}
}

// FlushSample merges the inputs calls offered so far into the store now (Close does it too).
func (f *Forge) FlushSample() { f.samples.drain() }

// PurgeSample drops the sample of real calls role.method keeps (`forge sample purge`).
func (f *Forge) PurgeSample(ctx context.Context, role, method string) error {
	_, err := f.operate(ctx, OpPurgeSample, "", role, method, func(a *registry.Artifact) error {
		a.Sample = nil
		return nil
	})
	return err
}

// mayRead reports whether the client caller may read a sampled input (and the answer it got)
// that client offeredBy's call offered: on a forge without client identities every caller is the
// client "" and reads them all; a named client reads only its own.
func mayRead(caller, offeredBy string) bool { return caller == "" || caller == offeredBy }

// SampleFor is the part of an artifact's sample of real calls that ctx's client (ClientFrom) may
// read: the inputs its own calls offered, or all of them for the client "" (no client
// identities). An edge that shows an artifact to a client of its role shows it this, and the
// whole sample only to the operator.
func SampleFor(ctx context.Context, sample []registry.SampleEntry) []registry.SampleEntry {
	caller := ClientFrom(ctx)
	if caller == "" {
		return sample
	}
	var out []registry.SampleEntry
	for _, e := range sample {
		if mayRead(caller, e.Client) {
			out = append(out, e)
		}
	}
	return out
}

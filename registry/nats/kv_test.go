package nats

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/registry/nats/embedded"
)

func newArtifact(role, method, code string) *registry.Artifact {
	a := &registry.Artifact{SchemaVersion: registry.SchemaVersion, Role: role, Method: method, Lifecycle: registry.Candidate, CreatedAt: time.Now().UTC()}
	a.Promote(code, "initial_forge", "test-model", "p1", time.Now().UTC())
	return a
}

func TestTablePrimitivesSingleNode(t *testing.T) {
	s := open(t, "prim", 1, single(t))
	ctx := testCtx(t)

	// Roles: create-only, get with revision, CAS update, delete at a revision.
	rk, err := s.RoleKey("text_tools")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Roles.Get(ctx, rk); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("missing role: %v, want ErrNotFound", err)
	}
	rec := registry.RoleRecord{Contract: registry.Contract{Role: "text_tools", Purpose: "text"}, Fingerprint: "fp1"}
	rev1, err := s.Roles.Create(ctx, rk, rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Roles.Create(ctx, rk, rec); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	got, err := s.Roles.Get(ctx, rk)
	if err != nil || got.Revision != rev1 || got.Value.Role != "text_tools" || got.Value.Fingerprint != "fp1" {
		t.Fatalf("get: %+v %v", got, err)
	}
	up, err := s.Roles.Update(ctx, rk, func(old registry.RoleRecord, exists bool) (registry.RoleRecord, error) {
		if !exists {
			t.Error("update saw no role")
		}
		old.Fingerprint = "fp2"
		return old, nil
	})
	if err != nil || up.Revision <= rev1 || up.Value.Fingerprint != "fp2" {
		t.Fatalf("update: %+v %v", up, err)
	}
	// GetAtLeast returns the write it is told of, and refuses to pretend a future revision exists.
	if e, err := s.Roles.GetAtLeast(ctx, rk, up.Revision); err != nil || e.Revision != up.Revision {
		t.Fatalf("GetAtLeast(%d): %+v %v", up.Revision, e, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = s.Roles.GetAtLeast(short, rk, up.Revision+1000)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetAtLeast of a revision nobody wrote: %v", err)
	}
	// ErrNoChange writes nothing.
	same, err := s.Roles.Update(ctx, rk, func(old registry.RoleRecord, _ bool) (registry.RoleRecord, error) { return old, ErrNoChange })
	if err != nil || same.Revision != up.Revision {
		t.Fatalf("no-change update wrote: %+v %v", same, err)
	}
	// A function error aborts.
	boom := errors.New("boom")
	if _, err := s.Roles.Update(ctx, rk, func(old registry.RoleRecord, _ bool) (registry.RoleRecord, error) { return old, boom }); !errors.Is(err, boom) {
		t.Fatalf("fn error: %v", err)
	}
	if err := s.Roles.Delete(ctx, rk, rev1); !errors.Is(err, ErrConflict) {
		t.Fatalf("delete at a stale revision: %v, want ErrConflict", err)
	}
	if err := s.Roles.Delete(ctx, rk, up.Revision); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Roles.Get(ctx, rk); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("deleted role: %v", err)
	}
	// Create works again after a delete; Update on a missing key creates it.
	if _, err := s.Roles.Create(ctx, rk, rec); err != nil {
		t.Fatalf("create after delete: %v", err)
	}
	if err := s.Roles.Delete(ctx, rk, 0); err != nil {
		t.Fatal(err)
	}
	re, err := s.Roles.Update(ctx, rk, func(old registry.RoleRecord, exists bool) (registry.RoleRecord, error) {
		if exists {
			t.Error("Update saw a deleted role as existing")
		}
		return rec, nil
	})
	if err != nil || re.Value.Role != "text_tools" {
		t.Fatalf("update of a deleted key: %+v %v", re, err)
	}

	// Artifacts keep their 3-generation history and are verified on read.
	ak, err := s.ArtifactKey("text_tools", "upper")
	if err != nil {
		t.Fatal(err)
	}
	var last *registry.Artifact
	for i, code := range []string{"package x // 1", "package x // 2", "package x // 3", "package x // 4"} {
		e, err := s.Artifacts.Update(ctx, ak, func(a *registry.Artifact, exists bool) (*registry.Artifact, error) {
			if !exists {
				return newArtifact("text_tools", "upper", code), nil
			}
			a.Promote(code, "regenerate:test", "m", "p1", time.Now().UTC())
			return a, nil
		})
		if err != nil {
			t.Fatalf("generation %d: %v", i+1, err)
		}
		last = e.Value
	}
	ga, err := s.Artifacts.Get(ctx, ak)
	if err != nil {
		t.Fatal(err)
	}
	if ga.Value.Code != "package x // 4" || ga.Value.Generation != last.Generation || len(ga.Value.History) != len(last.History) || len(ga.Value.History) > 3 {
		t.Fatalf("artifact round trip: gen %d history %d code %q", ga.Value.Generation, len(ga.Value.History), ga.Value.Code)
	}
	// A damaged value is ErrCorrupt, not a panic or a silent zero.
	if _, err := s.Data.Put(ctx, ak, []byte(`{"schema_version":`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Artifacts.Get(ctx, ak); !errors.Is(err, registry.ErrCorrupt) {
		t.Fatalf("damaged artifact: %v, want ErrCorrupt", err)
	}
	if _, err := s.ArtifactKey("Text", "upper"); !errors.Is(err, registry.ErrInvalidName) {
		t.Fatalf("invalid role name: %v", err)
	}

	// Knowledge domains are free-form names: escaped.
	kk, err := s.KnowledgeKey("web.scraping Tools")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Knowledge.Put(ctx, kk, []byte("- lesson: one\n")); err != nil {
		t.Fatal(err)
	}
	kg, err := s.Knowledge.Get(ctx, kk)
	if err != nil || string(kg.Value) != "- lesson: one\n" {
		t.Fatalf("knowledge: %q %v", kg.Value, err)
	}
	keys, err := s.Knowledge.List(ctx, "")
	if err != nil || len(keys) != 1 {
		t.Fatalf("knowledge keys: %v %v", keys, err)
	}
	if p, ok := s.Knowledge.Parts(keys[0]); !ok || p[0] != "web.scraping Tools" {
		t.Fatalf("knowledge key %q parts %v", keys[0], p)
	}
}

// TestUpdateNoLostUpdates: 16 goroutines on two connections increment one counter by
// compare-and-set; every increment is there.
func TestUpdateNoLostUpdates(t *testing.T) {
	u := single(t)
	a, b := open(t, "cas", 1, u), open(t, "cas", 1, u)
	ctx := testCtx(t)
	type counter struct{ N int }
	const workers, each = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := range workers {
		s := a
		if i%2 == 1 {
			s = b
		}
		tb := NewTable(s.MetricsKV, "test.", JSONCodec[counter]())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := tb.Update(ctx, "test.n", func(c counter, _ bool) (counter, error) { c.N++; return c, nil }); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := NewTable(a.MetricsKV, "test.", JSONCodec[counter]()).Get(ctx, "test.n")
	if err != nil || got.Value.N != workers*each {
		t.Fatalf("counter %d, want %d (%v)", got.Value.N, workers*each, err)
	}
}

// TestUpdateHonoursContext: a conflicting Update gives up when its context ends.
func TestUpdateHonoursContext(t *testing.T) {
	s := open(t, "ctx", 1, single(t))
	tb := NewTable(s.MetricsKV, "", JSONCodec[int]())
	if _, err := tb.Put(testCtx(t), "k", 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// Every attempt is overtaken by a write from "another process" inside fn.
	start := time.Now()
	_, err := tb.Update(ctx, "k", func(v int, _ bool) (int, error) {
		if _, err := tb.Put(context.Background(), "k", v+100); err != nil {
			return 0, err
		}
		return v + 1, nil
	})
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrConflict) {
		t.Fatalf("err %v, want the deadline or ErrConflict", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("Update ignored its context for %v", time.Since(start))
	}
}

func TestStartEmbeddedStops(t *testing.T) {
	dir := t.TempDir()
	u, stop, err := embedded.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, "emb", 1, u)
	if _, err := s.Roles.Put(testCtx(t), "roles.x", registry.RoleRecord{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	stop()
	stop() // twice is fine
	// The data survives a restart in the same directory.
	u2, stop2, err := embedded.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer stop2()
	s2 := open(t, "emb", 1, u2)
	if _, err := s2.Roles.Get(testCtx(t), "roles.x"); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

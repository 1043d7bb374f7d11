package native

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/artifactforge/forge/internal/storepath"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// buildTimeout bounds one go build of a worker.
var buildTimeout = 60 * time.Second

// maxExecutableBytes bounds a cached executable read back (a worker is a few MB).
const maxExecutableBytes = 256 << 20

// builder builds worker executables and keeps them in the cache (CacheDir/native/bin, by content
// key), their SHA-256 recorded outside it (RecordDir/native/bin): the cache is not trusted, and
// an executable whose hash does not match its record is built again.
type builder struct {
	dir  string // CacheDir/native/bin
	root string // the directory below which no link in the cache is followed
	rec  guestgen.Records

	once  sync.Once
	tc    guestgen.Toolchain
	tcErr error

	mu       sync.Mutex
	inflight map[string]*buildCall
}

type buildCall struct {
	done chan struct{}
	bin  []byte
	err  error
}

func (b *builder) toolchain() (guestgen.Toolchain, error) {
	b.once.Do(func() { b.tc, b.tcErr = guestgen.FindToolchain("") })
	return b.tc, b.tcErr
}

func binRecord(key string) string { return "bin/" + key }

// build returns g's executable: from the cache when its record matches, else built (concurrent
// builds of one key are shared).
func (b *builder) build(ctx context.Context, g guestModule) ([]byte, string, error) {
	tc, err := b.toolchain()
	if err != nil {
		return nil, "", err
	}
	key := g.key(tc.Version)
	path := filepath.Join(b.dir, key)
	if bin, ok := b.cached(path, key); ok {
		return bin, key, nil
	}
	b.mu.Lock()
	if c := b.inflight[key]; c != nil {
		b.mu.Unlock()
		select {
		case <-c.done:
			return c.bin, key, c.err
		case <-ctx.Done():
			return nil, "", sandbox.Errorf(sandbox.KindDeadline, "native: waiting for a build: %v", ctx.Err())
		}
	}
	c := &buildCall{done: make(chan struct{})}
	if b.inflight == nil {
		b.inflight = map[string]*buildCall{}
	}
	b.inflight[key] = c
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.inflight, key)
		b.mu.Unlock()
		close(c.done)
	}()
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), buildTimeout)
	defer cancel()
	c.bin, c.err = goBuild(bctx, tc, g)
	if c.err != nil {
		return nil, "", c.err
	}
	// A cache that cannot be written costs a rebuild next time, nothing else.
	if err := storepath.MkdirAll(b.root, b.dir, 0o755); err == nil {
		if err := storepath.Replace(b.root, path, c.bin); err == nil {
			_ = b.rec.Write(binRecord(key), guestgen.SHA256Hex(c.bin))
		}
	}
	return c.bin, key, nil
}

// cached returns the executable at path if its SHA-256 is the one recorded when this package
// wrote it.
func (b *builder) cached(path, key string) ([]byte, bool) {
	want := b.rec.Read(binRecord(key))
	if want == "" || storepath.Check(b.root, path, "read a cached worker") != nil {
		return nil, false
	}
	f, err := storepath.OpenRegular(path, "read a cached worker")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxExecutableBytes+1)); err != nil || buf.Len() > maxExecutableBytes {
		return nil, false
	}
	if guestgen.SHA256Hex(buf.Bytes()) != want {
		return nil, false
	}
	now := time.Now()
	_ = os.Chtimes(path, now, now) // its last use, for PruneCache
	return buf.Bytes(), true
}

// goBuild writes g to a temporary directory and builds it for this machine, without cgo.
func goBuild(ctx context.Context, tc guestgen.Toolchain, g guestModule) ([]byte, error) {
	dir, err := os.MkdirTemp("", "forge-native-build-*")
	if err != nil {
		return nil, sandbox.Errorf(sandbox.KindInternal, "native: build dir: %v", err)
	}
	defer os.RemoveAll(dir)
	for p, content := range g.files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, sandbox.Errorf(sandbox.KindInternal, "native: build dir: %v", err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return nil, sandbox.Errorf(sandbox.KindInternal, "native: build dir: %v", err)
		}
	}
	out := filepath.Join(dir, "worker")
	cmd := exec.CommandContext(ctx, tc.Gobin, "build", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = buildEnv()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindDeadline, Err: ctx.Err(),
				Message: fmt.Sprintf("the build of this code exceeded %v (go build stopped)", buildTimeout)}
		}
		return nil, guestgen.BuildError(stderr.String(), err)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		return nil, sandbox.Errorf(sandbox.KindInternal, "native: read the built worker: %v", err)
	}
	return bin, nil
}

// buildEnv is the go build environment: this machine's OS and architecture, no cgo, no
// workspace, no toolchain switch, the user's module and build caches.
func buildEnv() []string {
	return guestgen.BuildEnv("CGO_ENABLED=0", "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOSUMDB=off")
}

var errNotLinux = errors.New("the native backend runs on Linux amd64 and arm64 only")

package native

import (
	"os"
	"sync"
	"sync/atomic"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// image is a worker executable as workers run it: a sealed memfd (sealedFile), shared by the
// programs of one build key. A worker execs /proc/self/fd/imageFD, its image handed to it as that
// fd: the bytes it runs are the bytes hashed when the memfd was sealed, which nothing (no process,
// no fd) can change after. No file is written and then executed by path, so no fork can hold a
// writable fd to it ("text file busy").
type image struct {
	key  string // in Sandbox.images
	size int64  // the memfd's bytes: memory, whatever the workers map of it
	// owner is the program whose LiveBytes counts size: one of the programs that share the image
	// (other clients' programs of the same code), so that it counts once (see counted).
	owner atomic.Pointer[Program]

	mu sync.RWMutex // a start holds it for reading while it forks
	f  *os.File     // nil once closed
}

// imageFD is the worker's fd of its image (3 frames, 4 a test run's report), which the lockdown
// closes first.
const imageFD = 5

// image returns the sealed image of bin (the executable of build key), shared with the programs
// that have it; dropImage releases it.
func (s *Sandbox) image(key string, bin []byte) (*image, error) {
	return s.images.Acquire(key, func() (*image, error) {
		f, err := sealedFile(bin, guestgen.SHA256Hex(bin))
		if err != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "native: a sealed copy of the worker executable: " + err.Error(),
				Hint: "the native backend needs memfd_create with sealing, and exec of memfds (vm.memfd_noexec below 2); use the wasm sandbox"}
		}
		return &image{key: key, size: int64(len(bin)), f: f}, nil
	}, (*image).close)
}

// dropImage releases a reference to im; the last closes it.
func (s *Sandbox) dropImage(im *image) {
	if s.images.Release(im.key, im) {
		im.close()
	}
}

// counted reports whether p's LiveBytes counts the image: p owns it, or takes it over from no
// owner (the last owner closed).
func (im *image) counted(p *Program) bool {
	o := im.owner.Load()
	if o == p {
		return true
	}
	return o == nil && !p.closed.Load() && im.owner.CompareAndSwap(nil, p)
}

// disown is p's close: another program of the image counts it from now on.
func (im *image) disown(p *Program) { im.owner.CompareAndSwap(p, nil) }

func (im *image) close() {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.f != nil {
		im.f.Close()
		im.f = nil
	}
}

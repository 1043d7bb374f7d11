package native

import (
	"os"
	"sync"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// image is a worker executable as workers run it: a sealed memfd (sealedFile), shared by the
// programs of one build key. A worker execs /proc/self/fd/imageFD, its image handed to it as that
// fd: the bytes it runs are the bytes hashed when the memfd was sealed, which nothing (no process,
// no fd) can change after. No file is written and then executed by path, so no fork can hold a
// writable fd to it ("text file busy").
type image struct {
	key  string
	refs int // under Sandbox.mu

	mu sync.RWMutex // a start holds it for reading while it forks
	f  *os.File     // nil once closed
}

// imageFD is the worker's fd of its image (3 frames, 4 a test run's report), which the lockdown
// closes first.
const imageFD = 5

// image returns the sealed image of bin (the executable of build key), shared with the programs
// that have it; dropImage releases it.
func (s *Sandbox) image(key string, bin []byte) (*image, error) {
	s.mu.Lock()
	if im := s.images[key]; im != nil {
		im.refs++
		s.mu.Unlock()
		return im, nil
	}
	s.mu.Unlock()
	f, err := sealedFile(bin, guestgen.SHA256Hex(bin))
	if err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "native: a sealed copy of the worker executable: " + err.Error(),
			Hint: "the native backend needs memfd_create with sealing, and exec of memfds (vm.memfd_noexec below 2); use the wasm sandbox"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if im := s.images[key]; im != nil {
		im.refs++
		f.Close()
		return im, nil
	}
	im := &image{key: key, refs: 1, f: f}
	s.images[key] = im
	return im, nil
}

// dropImage releases a reference to im; the last closes it.
func (s *Sandbox) dropImage(im *image) {
	s.mu.Lock()
	im.refs--
	last := im.refs <= 0
	if last && s.images[im.key] == im {
		delete(s.images, im.key)
	}
	s.mu.Unlock()
	if last {
		im.close()
	}
}

func (im *image) close() {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.f != nil {
		im.f.Close()
		im.f = nil
	}
}

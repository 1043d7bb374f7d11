package native

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/internal/tailbuf"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// TestConcurrentFirstStartsNoTextFileBusy: many first compiles at once, each in a sandbox of its
// own (its own copy of the executable to write and start), all start their worker. A child forked
// while another goroutine held an executable open for writing inherited that fd, and the other's
// exec then failed "text file busy".
func TestConcurrentFirstStartsNoTextFileBusy(t *testing.T) {
	ctx := context.Background()
	src := sandbox.Source{Code: "package artifact\n\nfunc Triple(a int) int { return 3 * a }\n"}
	p, err := shared.Compile(ctx, src) // built once, then read from the cache
	require.NoError(t, err)
	p.Close()
	const sandboxes, rounds = 32, 8
	var wg sync.WaitGroup
	errs := make(chan error, sandboxes*rounds)
	for range sandboxes {
		wg.Go(func() {
			for range rounds {
				s, err := New(Options{CacheDir: sandboxtest.BuildCacheDir(), IdleTimeout: -1})
				if err != nil {
					errs <- err
					return
				}
				p, err := s.Compile(ctx, src)
				if err == nil {
					var out sandbox.Output
					out, err = s.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[5]`)})
					if err == nil && string(out.Value) != "15" {
						err = assert.AnError
					}
					p.Close()
				}
				s.Close()
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// testImage is bin sealed, closed by the test's end.
func testImage(t *testing.T, bin []byte) *image {
	f, err := sealedFile(bin, guestgen.SHA256Hex(bin))
	require.NoError(t, err)
	im := &image{f: f}
	t.Cleanup(im.close)
	return im
}

// TestPrintedEndMarkIsText: an artifact that prints the end-of-call mark (the constant it was, or
// its form with a guessed token; or a start mark) does not end its call's output there: the lines it prints after
// are still its call's, none reaches the next call's logs.
func TestPrintedEndMarkIsText(t *testing.T) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: `package artifact

import "fmt"

func Forge(n int) int {
	fmt.Println("before", n)
	fmt.Print("\x00forge:end-of-call\x00\n")
	fmt.Print("\x00forge: end of call AAAAAAAAAAAAAAAAAAAAAAAAAA\x00\n")
	fmt.Print("\x00forge: start of call AAAAAAAAAAAAAAAAAAAAAAAAAA\x00\n")
	for i := range 50 {
		fmt.Println("after", n, i)
	}
	return n
}
`})
	require.NoError(t, err)
	defer p.Close()
	for n := range 30 {
		out, err := shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(strconv.Itoa(n)), Caps: sandbox.Capabilities{Log: true}})
		require.NoError(t, err)
		require.Len(t, out.Logs, 54, "call %d: %q", n, out.Logs)
		assert.Equal(t, fmt.Sprint("before ", n), out.Logs[0])
		for i := range 50 {
			assert.Equal(t, fmt.Sprint("after ", n, " ", i), out.Logs[4+i], "call %d", n)
		}
	}
}

// TestWorkerRunsTheSealedImage: a worker is exec'd from its program's sealed memfd (not from a
// path another process could swap between the check and the exec), which no fd can change.
func TestWorkerRunsTheSealedImage(t *testing.T) {
	ctx := context.Background()
	prog, err := shared.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Triple(a int) int { return 3 * a }\n"})
	require.NoError(t, err)
	defer prog.Close()
	p := prog.(*Program)
	pl := p.pool(sandbox.DefaultMemoryBytes)
	w, err := shared.get(ctx, pl, time.Second)
	require.NoError(t, err)
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", w.cmd.Process.Pid))
	shared.put(pl, w)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(exe, "/memfd:forge-worker"), "the worker runs %s", exe)

	// Through the memfd's own (read-write) fd, and through another one opened by path: the seals
	// refuse a write, a truncation, a growth (or the kernel refuses a writer while a worker runs it).
	for _, open := range []func() (*os.File, error){
		func() (*os.File, error) { return p.img.f, nil },
		func() (*os.File, error) {
			return os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", p.img.f.Fd()), os.O_RDWR, 0)
		},
	} {
		f, err := open()
		if err != nil {
			assert.ErrorIs(t, err, syscall.ETXTBSY)
			continue
		}
		_, err = f.WriteAt([]byte("\x7fELF planted"), 0)
		assert.ErrorIs(t, err, syscall.EPERM, "a write")
		assert.ErrorIs(t, f.Truncate(0), syscall.EPERM, "a truncation")
		_, err = f.WriteAt([]byte("more"), 64<<20)
		assert.ErrorIs(t, err, syscall.EPERM, "growing it")
		if f != p.img.f {
			f.Close()
		}
	}
	out, err := shared.Run(ctx, prog, sandbox.Input{Args: json.RawMessage(`[5]`)})
	require.NoError(t, err)
	assert.Equal(t, "15", string(out.Value))
}

func TestMemfdExec(t *testing.T) {
	for _, c := range []struct {
		noexec string
		ok     bool
	}{{"", true}, {"0\n", true}, {"1\n", true}, {"2\n", false}} {
		assert.Equal(t, c.ok, memfdExec(c.noexec) == nil, "%q", c.noexec)
	}
}

// TestNewCallTakesWhatAnEarlierCallLeftOnStderr: what a worker wrote on stderr before a call
// begins, read or still in the pipe, is not in the call's stderr; what it writes after is.
func TestNewCallTakesWhatAnEarlierCallLeftOnStderr(t *testing.T) {
	for range 50 {
		r, wr, err := pipe(true)
		require.NoError(t, err)
		rc, err := r.SyscallConn()
		require.NoError(t, err)
		w := &worker{stderr: tailbuf.New(stderrHead, stderrTail), errR: rc}
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.readStderr()
		}()
		_, err = wr.Write([]byte("panic: an earlier call's\n"))
		require.NoError(t, err)
		w.newCall()
		_, err = wr.Write([]byte("this call's"))
		require.NoError(t, err)
		wr.Close()
		<-done
		r.Close()
		require.Equal(t, "this call's", w.stderr.String())
	}
}

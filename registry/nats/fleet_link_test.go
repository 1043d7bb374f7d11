package nats

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// hangBound only turns a hang into a failure: an operation on an unreachable store must end
// "at once" (after at most reconnectGrace), and without this change waited fleetOpTimeout (15 s)
// or, for a generation lock, generationWait (10 minutes).
const hangBound = 5 * time.Second

// unreachableErr checks that err says the store is unreachable, names it (without its secret)
// and says what to do.
func unreachableErr(t *testing.T, f *FleetStore, what string, err error, took time.Duration) {
	t.Helper()
	unreachableWithin(t, f, what, err, took, hangBound)
}

func unreachableWithin(t *testing.T, f *FleetStore, what string, err error, took, bound time.Duration) {
	t.Helper()
	t.Logf("%s with the server down: %v after %v", what, err, took.Round(time.Millisecond))
	require.Error(t, err, what)
	assert.Less(t, took, bound, what)
	assert.True(t, errors.Is(err, ErrUnreachable), "%s: %v", what, err)
	assert.Contains(t, err.Error(), f.Location(), what)
	assert.Contains(t, err.Error(), "check that nats-server runs there", what)
	assert.NotContains(t, err.Error(), "s3cret", what)
}

// TestFleetServerDown: with the NATS server stopped, what needs the server (a cold Load, a role
// write, the listings Stale reads, a generation lock, already waiting or not) fails at once with
// an error that names the store and says what to do, while warm methods keep running from
// memory; when the server is back, so are the operations.
func TestFleetServerDown(t *testing.T) {
	n, err := embedded.StartNode(embedded.NodeConfig{Name: "down", Dir: t.TempDir(), Token: "s3cret"})
	require.NoError(t, err)
	t.Cleanup(n.Stop)
	u := "nats://s3cret@" + strings.TrimPrefix(n.URL(), "nats://")
	f := openFleet(t, u, "down")
	holder := openFleet(t, u, "down") // another process, holding a generation lease
	require.NotContains(t, f.Location(), "s3cret")

	contract := registry.Contract{Role: "r", Purpose: "down test", Methods: map[string]string{"m": "func M(s string) (string, error)"}}
	_, err = f.PutRole(contract, time.Now())
	require.NoError(t, err)
	for _, m := range []string{"warm", "cold"} {
		_, err := holder.Update("r", m, func(a *registry.Artifact, _ bool) error {
			a.Promote("package artifact // "+m, "initial_forge", m, "pv", time.Now())
			return nil
		})
		require.NoError(t, err)
	}
	_, err = f.Load("r", "warm")
	require.NoError(t, err)
	_, err = f.Role("r")
	require.NoError(t, err)

	// A cold caller of r.cold already waits for the lease another process holds (in flight when
	// the server goes away).
	held, release := make(chan struct{}), make(chan struct{})
	go holder.WithGenerationLock("r", "cold", func() error { close(held); <-release; return nil })
	defer close(release)
	<-held
	waiting := make(chan error, 1)
	var waitStart time.Time
	go func() {
		waitStart = time.Now()
		waiting <- f.WithGenerationLock("r", "cold", func() error { return errors.New("ran without the lease") })
	}()
	time.Sleep(200 * time.Millisecond) // let it reach the wait

	n.Stop()
	stopped := time.Now()

	select {
	case err := <-waiting:
		unreachableErr(t, f, "a generation lock already waiting", err, time.Since(stopped))
	case <-time.After(hangBound):
		t.Fatalf("a generation lock waiting since %v still waits %v after the server stopped", waitStart, hangBound)
	}

	// Warm: from memory, whether or not the watch has set the cache aside yet.
	start := time.Now()
	a, err := f.Load("r", "warm")
	require.NoError(t, err, "a warm method runs from memory")
	assert.Equal(t, 1, a.Generation)
	assert.Less(t, time.Since(start), hangBound)
	_, ok := f.Lookup("r", "warm")
	assert.True(t, ok)
	_, err = f.Role("r")
	require.NoError(t, err, "a cached role is served from memory")

	ops := []struct {
		what string
		run  func() error
	}{
		{"a cold Load", func() error { _, err := f.Load("r", "cold"); return err }},
		{"PutRole", func() error { _, err := f.PutRole(contract, time.Now()); return err }},
		{"Role of an uncached role", func() error { _, err := f.Role("other"); return err }},
		{"Summaries", func() error { _, err := f.Summaries(); return err }},
		{"Roles", func() error { _, err := f.Roles(); return err }},
		{"List", func() error { _, err := f.List(); return err }},
		{"Each", func() error {
			return f.Each(func(registry.Key, *registry.Artifact, error) error { return nil })
		}},
		{"Update", func() error {
			_, err := f.Update("r", "cold", func(*registry.Artifact, bool) error { return nil })
			return err
		}},
		{"a generation lock", func() error {
			return f.WithGenerationLock("r", "new", func() error { return errors.New("ran without the lease") })
		}},
		{"a knowledge read", func() error { _, _, err := f.Knowledge().Read("go"); return err }},
		{"Doctor", func() error { _, err := f.Doctor(); return err }},
	}
	for _, op := range ops {
		start := time.Now()
		err := op.run()
		unreachableErr(t, f, op.what, err, time.Since(start))
	}

	// Back: the connection returns by itself and so do the operations.
	require.NoError(t, n.Restart())
	require.Eventually(t, func() bool {
		_, err := f.PutRole(contract, time.Now())
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "writes work again once the server is back")
	a, err = f.Load("r", "cold")
	require.NoError(t, err)
	assert.Equal(t, 1, a.Generation)
}

// freezingProxy forwards TCP connections to a server until frozen: then it holds every
// connection open and forwards nothing (nor answers new ones), as a cut network or a frozen
// machine does. The client's connection still looks up: nothing closed it.
type freezingProxy struct {
	ln     net.Listener
	target string
	frozen chan struct{} // closed by freeze
	done   chan struct{} // closed by stop
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
	once   sync.Once
}

func startFreezingProxy(t *testing.T, target string) *freezingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &freezingProxy{ln: ln, target: target, frozen: make(chan struct{}), done: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.stop)
	return p
}

func (p *freezingProxy) URL() string { return "nats://" + p.ln.Addr().String() }

func (p *freezingProxy) freeze() { close(p.frozen) }

func (p *freezingProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		c.Close()
		return false
	default:
	}
	p.conns = append(p.conns, c)
	return true
}

func (p *freezingProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		select {
		case <-p.frozen:
			continue // held open, never answered
		default:
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(s) {
			return
		}
		p.wg.Add(2)
		go p.pipe(s, c)
		go p.pipe(c, s)
	}
}

// pipe copies src to dst until frozen (then it holds what it read) or stopped.
func (p *freezingProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-p.frozen:
			<-p.done
			return
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *freezingProxy) stop() {
	p.once.Do(func() {
		p.mu.Lock()
		close(p.done)
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.ln.Close()
		p.wg.Wait()
	})
}

// TestFleetServerSilent: the server goes silent without closing the connection (a cut network:
// the connection still looks up, and nats.go's own pings would notice only minutes later). The
// store's watch misses its heartbeats, a ping goes unanswered, the connection is made to
// reconnect, and operations fail with ErrUnreachable instead of waiting out their timeout (set
// to a minute here); a warm method still runs from memory.
func TestFleetServerSilent(t *testing.T) {
	p := startFreezingProxy(t, strings.TrimPrefix(singleNoSync(t), "nats://"))
	cfg, err := ParseURL(p.URL()+"/silent", noEnv)
	require.NoError(t, err)
	f, err := openFleetWith(cfg, registry.OpenOptions{LocalDir: t.TempDir(), ClientName: "forge-test"}, nats.Timeout(time.Second))
	require.NoError(t, err)
	defer f.Close()
	f.opTimeout = time.Minute
	for _, m := range []string{"warm", "cold"} {
		_, err := f.Update("r", m, func(a *registry.Artifact, _ bool) error {
			a.Promote("package artifact // "+m, "initial_forge", m, "pv", time.Now())
			return nil
		})
		require.NoError(t, err)
	}
	f.mu.Lock()
	delete(f.cache, registry.Key{Role: "r", Method: "cold"})
	f.mu.Unlock()
	_, ok := f.Lookup("r", "warm")
	require.True(t, ok)

	p.freeze()
	frozen := time.Now()
	// In flight when the server went silent: ends once the watch has noticed, the ping has gone
	// unanswered and the grace has passed (about 3 s), not after its minute.
	start := time.Now()
	_, err = f.Load("r", "cold")
	unreachableWithin(t, f, "a cold Load in flight", err, time.Since(start), 2*hangBound)
	t.Logf("the connection was made to reconnect %d time(s), %v after the freeze", f.link.forced.Load(), time.Since(frozen).Round(time.Millisecond))
	assert.Positive(t, f.link.forced.Load(), "a reconnection was forced")

	start = time.Now()
	_, err = f.Update("r", "cold", func(*registry.Artifact, bool) error { return nil })
	unreachableErr(t, f, "an Update after", err, time.Since(start))

	start = time.Now()
	a, err := f.Load("r", "warm")
	require.NoError(t, err, "a warm method runs from memory")
	assert.Equal(t, 1, a.Generation)
	assert.Less(t, time.Since(start), hangBound)
	start = time.Now()
	f.Close()
	t.Logf("close: %v", time.Since(start))
}

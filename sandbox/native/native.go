package native

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
	"github.com/artifactforge/forge/sandbox/internal/reftab"
)

// Name is the backend's name in contracts ("sandbox": "native") and --sandbox.
const Name = "native"

// Options configure the native backend.
type Options struct {
	// CacheDir holds built worker executables (native/bin/); default os.UserCacheDir()/forge.
	CacheDir string
	// RecordDir holds their SHA-256, outside CacheDir (the forge passes its store's sums/); empty:
	// CacheDir/sums.
	RecordDir string
	// PoolSize bounds the worker processes per program and memory cap (0: 2 x GOMAXPROCS).
	PoolSize int
	// MaxWorkers bounds the worker processes over all programs (0: max(8, 2 x GOMAXPROCS)); an
	// idle worker of another program is ended to make room.
	MaxWorkers int
	// IdleTimeout is how long a worker beyond its pool's first may idle before it is ended (0:
	// DefaultIdleTimeout; negative: never).
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is Options.IdleTimeout's default.
const DefaultIdleTimeout = 30 * time.Second

// Sandbox runs artifacts as native executables in locked-down worker processes.
type Sandbox struct {
	opts    Options
	builder *builder
	dir     string // private: the workers' empty cwd
	cwd     string

	programs reftab.Table[*Program] // by reftab.ProgramKey
	images   reftab.Table[*image]   // by build key

	mu       sync.Mutex
	live     int           // worker processes alive
	idle     []idleWorker  // over all programs, oldest first
	freed    chan struct{} // signalled when a worker ends or turns idle
	closed   atomic.Bool
	stopTrim chan struct{}
}

type idleWorker struct {
	w     *worker
	pl    *pool
	since time.Time
}

// New makes a native sandbox.
func New(opts Options) (*Sandbox, error) {
	if err := available(); err != nil {
		return nil, sandbox.Errorf(sandbox.KindInternal, "native: %v", err)
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = 2 * runtime.GOMAXPROCS(0)
	}
	if opts.MaxWorkers <= 0 {
		opts.MaxWorkers = max(8, 2*runtime.GOMAXPROCS(0))
	}
	if opts.CacheDir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return nil, sandbox.Errorf(sandbox.KindInternal, "native: no cache dir: %v (set Options.CacheDir)", err)
		}
		opts.CacheDir = filepath.Join(d, "forge")
	}
	root := filepath.Dir(filepath.Clean(opts.CacheDir))
	if opts.RecordDir == "" {
		opts.RecordDir = filepath.Join(opts.CacheDir, "sums")
	}
	dir, err := os.MkdirTemp("", "forge-native-*")
	if err != nil {
		return nil, sandbox.Errorf(sandbox.KindInternal, "native: private dir: %v", err)
	}
	cwd := filepath.Join(dir, "cwd")
	if err := os.Mkdir(cwd, 0o500); err != nil {
		os.RemoveAll(dir)
		return nil, sandbox.Errorf(sandbox.KindInternal, "native: private dir: %v", err)
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	s := &Sandbox{
		opts: opts,
		builder: &builder{dir: filepath.Join(opts.CacheDir, "native", "bin"), root: root,
			rec: guestgen.Records{Root: guestgen.RecordRoot(opts.RecordDir), Dir: filepath.Join(opts.RecordDir, "native")}},
		dir: dir, cwd: cwd, freed: make(chan struct{}, 1), stopTrim: make(chan struct{}),
	}
	if opts.IdleTimeout > 0 {
		go s.trimLoop(opts.IdleTimeout)
	}
	return s, nil
}

// trimLoop ends, every interval, the workers idle for longer than it, but for each pool's last.
func (s *Sandbox) trimLoop(interval time.Duration) {
	guestgen.RunEvery(interval, s.stopTrim, func(now time.Time) { s.trim(now.Add(-interval)) })
}

// trim ends the idle workers idle since before cutoff, keeping one worker per pool.
func (s *Sandbox) trim(cutoff time.Time) int {
	s.mu.Lock()
	var ended []*worker
	kept := s.idle[:0]
	for _, iw := range s.idle {
		if iw.since.Before(cutoff) && iw.pl.count > 1 {
			iw.pl.count--
			s.live--
			ended = append(ended, iw.w)
			continue
		}
		kept = append(kept, iw)
	}
	s.idle = kept
	s.mu.Unlock()
	for _, w := range ended {
		w.close()
	}
	if len(ended) > 0 {
		s.signal()
	}
	return len(ended)
}

// Name is the backend's name (sandboxtest.Named).
func (s *Sandbox) Name() string { return Name }

// Close ends every worker and removes the private directory.
func (s *Sandbox) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.stopTrim)
	for _, p := range s.programs.Values() {
		p.closeWorkers()
	}
	for _, im := range s.images.Clear() {
		im.close()
	}
	return os.RemoveAll(s.dir)
}

// Program is a gated artifact with its worker executable.
type Program struct {
	src  sandbox.Source
	sig  sandbox.Signature
	sum  string
	img  *image // its executable, sealed
	size int64
	// static is what its package-level variables take (the executable's data and BSS): mapped at
	// exec, before the lockdown measures the worker, so start counts it against the memory cap.
	static int64
	sb     *Sandbox
	key    string // in sb.programs

	mu     sync.Mutex
	pools  map[int64]*pool
	closed atomic.Bool
}

// Signature is the function's signature.
func (p *Program) Signature() sandbox.Signature { return p.sig }

// Checksum is the code's checksum.
func (p *Program) Checksum() string { return p.sum }

// Source is the program's source.
func (p *Program) Source() sandbox.Source { return p.src }

// LiveBytes estimates what the program holds: its workers' resident memory is not measured; each
// counts as its executable's size plus the Go runtime's few MB. The sealed image the workers are
// exec'd from is memory too (a memfd): it counts once, in one of the programs that share it.
func (p *Program) LiveBytes() int64 {
	n := int64(0)
	if p.img.counted(p) {
		n += p.img.size
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sb.mu.Lock() // the pools' counts
	defer p.sb.mu.Unlock()
	for _, pl := range p.pools {
		n += int64(pl.count) * (p.size + 4<<20)
	}
	return n
}

// Close drops a reference; the last ends the program's workers.
func (p *Program) Close() error {
	if p.sb.programs.Release(p.key, p) && !p.closed.Swap(true) {
		p.img.disown(p)
		p.closeWorkers()
		p.sb.dropImage(p.img)
	}
	return nil
}

func (p *Program) closeWorkers() {
	s := p.sb
	s.mu.Lock()
	var mine []*worker
	kept := s.idle[:0]
	for _, iw := range s.idle {
		if iw.pl.prog == p {
			mine = append(mine, iw.w)
			iw.pl.count--
			s.live--
		} else {
			kept = append(kept, iw)
		}
	}
	s.idle = kept
	s.mu.Unlock()
	for _, w := range mine {
		w.close()
	}
	s.signal()
}

// pool is a program's workers under one memory cap.
type pool struct {
	prog  *Program
	mem   int64
	count int // alive, busy or idle (under Sandbox.mu)
}

func (s *Sandbox) signal() {
	select {
	case s.freed <- struct{}{}:
	default:
	}
}

// Compile gates src, builds (or finds in the cache) its worker executable and starts a first
// worker, so that build errors and failing initializers surface here.
func (s *Sandbox) Compile(ctx context.Context, src sandbox.Source) (sandbox.Program, error) {
	p, err := s.compile(ctx, src)
	if err != nil {
		return nil, sandbox.CapError(err)
	}
	return p, nil
}

func (s *Sandbox) compile(ctx context.Context, src sandbox.Source) (*Program, error) {
	return reftab.Compile(&s.programs, Name, s.closed.Load(), src, func(key string) (*Program, error) { return s.newProgram(ctx, src, key) })
}

// newProgram gates and builds src and starts its first worker.
func (s *Sandbox) newProgram(ctx context.Context, src sandbox.Source, key string) (*Program, error) {
	code, sig, err := guestgen.GateCall(src)
	if err != nil {
		return nil, err
	}
	g, err := callGuest(code, sig, hostSysnums)
	if err != nil {
		return nil, sandbox.Errorf(sandbox.KindCompile, "%v", err)
	}
	bin, bkey, err := s.builder.build(ctx, g)
	if err != nil {
		return nil, err
	}
	img, err := s.image(bkey, bin)
	if err != nil {
		return nil, err
	}
	p := &Program{src: src, sig: sig, sum: src.Checksum(), img: img, size: int64(len(bin)),
		static: staticBytes(bin), sb: s, key: key, pools: map[int64]*pool{}}
	lim := src.Limits.WithDefaults()
	pl := p.pool(lim.MemoryBytes)
	w, err := s.get(ctx, pl, lim.Timeout)
	if err != nil {
		p.Close()
		return nil, err
	}
	s.put(pl, w)
	return p, nil
}

func (p *Program) pool(mem int64) *pool {
	p.mu.Lock()
	defer p.mu.Unlock()
	pl := p.pools[mem]
	if pl == nil {
		pl = &pool{prog: p, mem: mem}
		p.pools[mem] = pl
	}
	return pl
}

// get returns an idle worker of pl, or starts one within the bounds (PoolSize per pool,
// MaxWorkers in all; an idle worker of another pool is ended to make room), waiting while none
// can be had.
func (s *Sandbox) get(ctx context.Context, pl *pool, timeout time.Duration) (*worker, error) {
	s.mu.Lock()
	if w := s.takeIdle(pl); w != nil { // the warm path: no start, no wait
		s.mu.Unlock()
		return w, nil
	}
	s.mu.Unlock()
	// Starting a process (exec, the Go runtime's start, the lockdown) is not the code's time: a
	// start gets startAllowance on top of the timeout its initializers run under.
	sctx, cancel := context.WithTimeout(ctx, timeout+startAllowance)
	defer cancel()
	for {
		s.mu.Lock()
		if w := s.takeIdle(pl); w != nil {
			s.mu.Unlock()
			return w, nil
		}
		var evict *worker
		if pl.count < s.opts.PoolSize && s.live >= s.opts.MaxWorkers && len(s.idle) > 0 {
			iw := s.idle[0]
			s.idle = s.idle[1:]
			iw.pl.count--
			s.live--
			evict = iw.w
		}
		start := pl.count < s.opts.PoolSize && s.live < s.opts.MaxWorkers
		if start {
			pl.count++
			s.live++
		}
		s.mu.Unlock()
		if evict != nil {
			evict.close()
		}
		if start {
			w, err := s.start(sctx, pl)
			if err != nil {
				s.release(pl)
				return nil, err
			}
			return w, nil
		}
		if evict != nil {
			continue
		}
		select {
		case <-s.freed:
		case <-sctx.Done():
			return nil, &sandbox.Error{Kind: sandbox.KindDeadline, Message: "no native worker became free within the call's timeout", Err: sctx.Err(),
				Hint: "fewer concurrent calls, or a larger pool (PoolSize, MaxWorkers)"}
		}
	}
}

// takeIdle removes pl's most recently idle worker from the idle list and returns it (nil: none).
// A worker that ended while idle (the OOM killer, an operator's kill) is ended instead: its call
// would fail as the code's crash though none of the code ran. Under s.mu.
func (s *Sandbox) takeIdle(pl *pool) *worker {
	for i := len(s.idle) - 1; i >= 0; i-- {
		if s.idle[i].pl == pl {
			w := s.idle[i].w
			s.idle = append(s.idle[:i], s.idle[i+1:]...)
			select {
			case <-w.exited:
				pl.count--
				s.live--
				go w.close()
				s.signal()
				continue
			default:
			}
			return w
		}
	}
	return nil
}

// startAllowance is what a worker's start may take beyond the call's timeout.
const startAllowance = 2 * time.Second

// start starts a worker of the program's image.
func (s *Sandbox) start(ctx context.Context, pl *pool) (*worker, error) {
	p := pl.prog
	if p.static >= pl.mem {
		return nil, &sandbox.Error{Kind: sandbox.KindMemory, Message: fmt.Sprintf("the code's package-level variables take %d bytes, over the %d-byte memory cap", p.static, pl.mem),
			Hint: "allocate large tables in the call (make) instead of declaring package-level arrays, or raise the memory limit"}
	}
	return startWorker(ctx, p.img, s.cwd, pl.mem-p.static)
}

// staticBytes is the size of an executable's data and BSS sections (0 if it is not ELF): its
// package-level variables, which no heap limit counts.
func staticBytes(bin []byte) int64 {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return 0
	}
	defer f.Close()
	var n int64
	for _, sec := range f.Sections {
		switch sec.Name {
		case ".data", ".bss", ".noptrdata", ".noptrbss":
			n += int64(sec.Size)
		}
	}
	return n
}

func (s *Sandbox) release(pl *pool) {
	s.mu.Lock()
	pl.count--
	s.live--
	s.mu.Unlock()
	s.signal()
}

// put returns w to the idle list, or ends it if it is broken, killed or its program closed.
func (s *Sandbox) put(pl *pool, w *worker) {
	if w.broken || w.killed.Load() || pl.prog.closed.Load() || s.closed.Load() {
		go w.close()
		s.release(pl)
		return
	}
	s.mu.Lock()
	s.idle = append(s.idle, idleWorker{w: w, pl: pl, since: time.Now()})
	s.mu.Unlock()
	s.signal()
}

// Run calls the program's function in one of its workers.
func (s *Sandbox) Run(ctx context.Context, prog sandbox.Program, in sandbox.Input) (sandbox.Output, error) {
	p, ok := prog.(*Program)
	args, err := guestgen.StartCall(Name, prog, ok && p.sb == s, ok && p.closed.Load(), &in)
	if err != nil {
		return sandbox.Output{}, err
	}
	start := time.Now()
	ctx, cancel := context.WithDeadline(ctx, start.Add(in.Limits.Timeout))
	defer cancel()
	pl := p.pool(in.Limits.MemoryBytes)
	w, err := s.get(ctx, pl, in.Limits.Timeout)
	if err != nil {
		return sandbox.Output{}, sandbox.CapError(err)
	}
	host := sandbox.NewHost(ctx, in)
	value, rerr := w.call(ctx, host, args, in.Limits, in.Caps.Log)
	if in.Limits.Instance == sandbox.InstancePerCall {
		w.broken = true
	}
	s.put(pl, w)
	var out sandbox.Output
	out.Value = value
	rerr = host.Finish(&out, rerr)
	out.Duration = time.Since(start)
	if rerr != nil {
		return sandbox.Output{Logs: out.Logs, Duration: out.Duration, HostCalls: out.HostCalls, UpstreamRead: out.UpstreamRead}, sandbox.CapError(rerr)
	}
	return out, nil
}

var _ sandbox.Sizer = (*Program)(nil)

package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"
)

// The machine's warm-up. The standard library the Go toolchain compiles for wasip1 lands in the
// user's Go build cache, which every store of the user shares; so a marker and a lock per user,
// Go version and build cache say whether it is there and let one process build it while the
// others wait (a detached warm-up that an earlier command started, a first call, a second store).
// The store's own marker (builder.warmMarker) stays: it is what a forge that never ran this code
// path left.

// lockWaiting, if set (tests), is called when lockFile starts waiting for the lock at path.
var lockWaiting func(path string)

// machineWarmDir is the directory of the machine markers and locks (a variable: tests point it at
// a temporary directory so that they neither read nor write the user's).
var machineWarmDir = func() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "forge", "wasm-warm"), nil
}

// goCacheDir is the Go build cache the toolchain uses with this environment ($GOCACHE, else the
// user cache directory's go-build, as the go command does): the warm-up is per cache.
func goCacheDir() string {
	if d := os.Getenv("GOCACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "go-build")
}

// machineWarmPath is the marker of one kind of module's warm-up with tc and the current build
// cache ("" if there is no place for it); the lock is the same path with ".lock".
func machineWarmPath(tc toolchain, test bool) string {
	dir, err := machineWarmDir()
	if err != nil || dir == "" {
		return ""
	}
	kind := "call"
	if test {
		kind = "test"
	}
	sum := sha256.Sum256([]byte(goCacheDir()))
	return filepath.Join(dir, tc.Version+"-"+hex.EncodeToString(sum[:6])+"-"+kind)
}

// machineWarm reports whether the machine marker of this kind exists.
func machineWarm(tc toolchain, test bool) bool {
	p := machineWarmPath(tc, test)
	if p == "" {
		return false
	}
	_, err := os.Lstat(p)
	return err == nil
}

// markMachineWarm writes the machine marker of this kind (a cache: failing to write it costs a
// needless warm-up later, nothing else).
func markMachineWarm(tc toolchain, test bool) {
	if p := machineWarmPath(tc, test); p != "" {
		_ = writeFileAtomic(filepath.Dir(p), p, []byte(tc.Version+"\n"+goCacheDir()+"\n"))
	}
}

// lockMachineWarm waits until this process holds the machine's warm-up lock of this kind, or ctx
// ends (then it goes on without it: the lock only saves duplicate work). The returned func
// releases it; waited says whether another process held it.
func lockMachineWarm(ctx context.Context, tc toolchain, test bool) (release func(), waited bool) {
	p := machineWarmPath(tc, test)
	if p == "" || os.MkdirAll(filepath.Dir(p), 0o700) != nil {
		return func() {}, false
	}
	return lockFile(ctx, p+".lock", 50*time.Millisecond)
}

// MachineNeedsWarm reports, without building anything, whether the toolchain forge would use has
// not yet built a module of each kind for wasip1 into the current Go build cache on this machine,
// as far as the machine markers say, and no process is at it (sandbox.Backend.NeedsWarm): every
// command of a first session would otherwise start one more warm-up that waits for the first.
// No toolchain: nothing to warm.
func MachineNeedsWarm() bool {
	tc, err := findToolchain("")
	if err != nil {
		return false
	}
	for _, test := range []bool{false, true} {
		if machineWarm(tc, test) {
			continue
		}
		return !lockHeld(machineWarmPath(tc, test) + ".lock")
	}
	return false
}

// WarmMachine builds the trivial call module, then the trivial test module, into the current Go
// build cache (sandbox.Backend.Warm), each under the machine's lock of its kind and skipped if its
// marker says another process did it meanwhile. It is what a detached warm-up runs, so that a
// first call started while it works waits for it rather than compile the standard library a
// second time on the same cores. The test module's part, which no first call of a method without
// acceptance tests waits for, runs at nice 10 (politely): it would otherwise take the cores from
// that call's own build as soon as the call's part is done.
func WarmMachine(ctx context.Context) error {
	tc, err := findToolchain("")
	if err != nil {
		return err
	}
	if err := warmMachineKind(ctx, tc, false); err != nil {
		return err
	}
	politely(func() { err = warmMachineKind(ctx, tc, true) })
	return err
}

func warmMachineKind(ctx context.Context, tc toolchain, test bool) error {
	wctx, cancel := context.WithTimeout(ctx, warmTimeout)
	defer cancel()
	release, _ := lockMachineWarm(wctx, tc, test)
	defer release()
	if machineWarm(tc, test) {
		return nil
	}
	if err := (&builder{}).warmBuild(wctx, tc, test); err != nil {
		return err
	}
	markMachineWarm(tc, test)
	return nil
}

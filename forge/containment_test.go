package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// hostileMethods pass the gate (their example input is small) and turn hostile on a larger input:
// what a persisted artifact that misbehaves later looks like to the call path.
var hostileMethods = map[string]string{
	"bulk": `package artifact

func Bulk(n int) int {
	if n < 10 {
		return n
	}
	a, b := make([]byte, 32<<20), make([]byte, 32<<20)
	for i := 0; ; i++ {
		copy(a, b)
		b[i%len(b)] = byte(i)
	}
}
`,
	"logs": `package artifact

import "forge/host"

func Logs(n int) int {
	for i := 0; i < n; i++ {
		host.Log("")
	}
	if n < 10 {
		return n
	}
	for {
		host.Log("again")
	}
}
`,
	"bomb": `package artifact

func Bomb(n int) int {
	if n < 10 {
		return n
	}
	var keep [][]byte
	for {
		keep = append(keep, make([]byte, 8<<20))
		keep[len(keep)-1][0] = 1
	}
}
`,
	"spin": `package artifact

func Spin(n int) int {
	if n < 10 {
		return n
	}
	x := 0
	for {
		x += n
	}
}
`,
}

// TestHostileAndInnocentRolesShareOneForge is the call path under attack: one forge serves a role
// whose persisted methods turn hostile (bulk copies, a log flood, a memory bomb, a busy loop) and
// an innocent role, from several goroutines at once, on the safe default backend and on yaegi in
// worker processes. Every innocent call answers correctly, every hostile call fails within its
// deadline plus a bound and is recorded as the code's fault (intrinsic), and the forge closes
// cleanly.
func TestHostileAndInnocentRolesShareOneForge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs hostile artifacts on two backends")
	}
	for _, pl := range []struct{ name, backend, isolation string }{
		{"default", "", ""},
		{"yaegi-process", "yaegi", sandbox.IsolationProcess},
	} {
		t.Run(pl.name, func(t *testing.T) {
			lines := []line{{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}}
			hostile := registry.Contract{Role: "hostile", Purpose: "turns hostile on large inputs",
				Methods: map[string]string{}, Capabilities: &registry.Capabilities{Log: true},
				Limits: &registry.Limits{Timeout: "1s", Memory: "64MB", Isolation: pl.isolation}}
			for m, code := range hostileMethods {
				lines = append(lines, line{Role: "hostile", Method: m, Kind: "generate", Attempt: 1, Code: code})
				hostile.Methods[m] = fmt.Sprintf("func %s(n int) int", sandbox.ExportedName(m))
			}
			f := openForge(t, t.TempDir(), cassette(t, lines...), func(o *Options) {
				o.DefaultSandbox = pl.backend
				o.Switches.RepairOff = true // a failure is reported as it is, not repaired
			})
			text := textContract()
			text.Limits = &registry.Limits{Isolation: pl.isolation}
			require.NoError(t, f.AddRole(text))
			require.NoError(t, f.AddRole(hostile))
			ctx := context.Background()
			// First calls generate and persist (small inputs pass the gate).
			o := f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"go"}`))
			require.True(t, o.OK, "%+v", o.Err)
			for m := range hostileMethods {
				o := f.Call(ctx, "hostile", m, json.RawMessage(`{"n":3}`))
				require.True(t, o.OK, "%s: %+v", m, o.Err)
			}

			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for g := range 3 {
				wg.Add(2)
				go func() { // innocent callers
					defer wg.Done()
					for i := range 20 {
						s := fmt.Sprintf("call-%d-%d", g, i)
						o := f.Call(ctx, "text", "upper", json.RawMessage(fmt.Sprintf(`{"s":%q}`, s)))
						want := fmt.Sprintf("%q", fmt.Sprintf("CALL-%d-%d", g, i))
						if !o.OK || string(o.Value) != want {
							errs <- fmt.Errorf("innocent call %s: ok=%v value=%s err=%+v", s, o.OK, o.Value, o.Err)
						}
					}
				}()
				go func() { // hostile callers
					defer wg.Done()
					for m := range hostileMethods {
						start := time.Now()
						o := f.Call(ctx, "hostile", m, json.RawMessage(`{"n":1000}`))
						took := time.Since(start)
						switch {
						case o.OK:
							errs <- fmt.Errorf("hostile %s answered %s", m, o.Value)
						case took > 30*time.Second:
							errs <- fmt.Errorf("hostile %s took %v for a 1s deadline", m, took)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			// Each hostile run was recorded against its artifact as the code's fault (the
			// outcome itself may report the repair that could not follow: no answer left).
			f.Flush()
			for m := range hostileMethods {
				a, err := f.Store().Load("hostile", m)
				require.NoError(t, err)
				if a.IntrinsicFailureCount < 1 {
					t.Errorf("hostile %s: %d intrinsic failures recorded, want at least 1 (extrinsic %d)", m, a.IntrinsicFailureCount, a.ExtrinsicFailureCount)
				}
			}
			closed := make(chan error, 1)
			go func() { closed <- f.Close() }()
			select {
			case err := <-closed:
				require.NoError(t, err)
			case <-time.After(5 * time.Second):
				t.Fatal("Close did not return within 5s")
			}
		})
	}
}

package native

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// TestRedteam4LongLineKeepsLaterCallsLogs: a call that prints a line over the worker's line
// bound (64 KiB) got no end-of-output mark read (the reader of the worker's stdout gave up), so
// it waited for its whole deadline, and the worker's later calls with logs (maybe another
// client's) failed as KindDeadline. A long line now reaches the logs in pieces, whatever its
// length, with or without its newline (then the end mark shares its line), and the calls after it
// have their logs.
func TestRedteam4LongLineKeepsLaterCallsLogs(t *testing.T) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: `package artifact

import (
	"fmt"
	"strings"
)

func Say(n int, newline bool) int {
	if n == 0 {
		fmt.Println("hello")
		return 0
	}
	fmt.Print(strings.Repeat("x", n))
	if newline {
		fmt.Println()
	}
	return n
}
`})
	require.NoError(t, err)
	defer p.Close()
	logs := sandbox.Capabilities{Log: true}
	lim := sandbox.Limits{OutputBytes: 1 << 20}
	for _, n := range []int{100000, maxLogLine - 60, maxLogLine - 49, maxLogLine - 47, maxLogLine - 40, maxLogLine - 1, maxLogLine, maxLogLine + 1, 3 * maxLogLine} {
		for _, newline := range []bool{false, true} {
			name := fmt.Sprintf("%d bytes, newline %v", n, newline)
			out, err := shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(fmt.Sprintf(`[%d, %v]`, n, newline)), Caps: logs, Limits: lim})
			require.NoError(t, err, name)
			assert.Equal(t, strings.Repeat("x", n), strings.Join(out.Logs, ""), name)
			out, err = shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[0, true]`), Caps: logs, Limits: lim})
			require.NoError(t, err, "the call after "+name)
			assert.Equal(t, []string{"hello"}, out.Logs, "the call after "+name)
		}
	}
}

// TestRedteam4IdleWorkerThatDiedIsNotUsed: an idle worker that ended while it waited for its
// next call (the kernel's OOM killer, an operator's kill) got that call, which failed as the
// code's crash (KindPanic: a health failure of the artifact, a repair) though no code of it ran.
func TestRedteam4IdleWorkerThatDiedIsNotUsed(t *testing.T) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Redteam4(a int) int { return a + 4 }\n"})
	require.NoError(t, err)
	defer p.Close()
	out, err := shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[1]`)})
	require.NoError(t, err)
	require.JSONEq(t, "5", string(out.Value))
	pl := p.(*Program).pool(sandbox.DefaultMemoryBytes)
	shared.mu.Lock()
	var w *worker
	for _, iw := range shared.idle {
		if iw.pl == pl {
			w = iw.w
		}
	}
	shared.mu.Unlock()
	require.NotNil(t, w, "the call's worker is idle")
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGKILL))
	<-w.exited
	out, err = shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[2]`)})
	require.NoError(t, err)
	assert.JSONEq(t, "6", string(out.Value))
}

package registry

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The multi-process test re-executes the test binary as a worker process.
const workerEnv = "FORGE_REGISTRY_TEST_WORKER"

const (
	workerRoles   = 50
	workerRecords = 1000
)

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(runWorker(os.Getenv("FORGE_REGISTRY_TEST_STORE"), os.Getenv(workerEnv)))
	}
	os.Exit(m.Run())
}

// runWorker adds workerRoles roles and records workerRecords successes on shared.counter, printing
// "role NAME" after each add that returned success and "flushed N" (cumulative) after each flush.
func runWorker(root, id string) int {
	s, err := Open(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rec := NewRecorder(s, 100*time.Millisecond)
	// Journals are sealed and compacted every few flushes, so compactions of several processes
	// run while the others flush (and the victim may die in the middle of one).
	rec.maxAge = 250 * time.Millisecond
	var compactions atomic.Int64
	rec.OnCompact = func(r CompactReport, err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "compaction:", err)
		}
		compactions.Add(int64(r.Journals))
	}
	var mu sync.Mutex
	var flushed int64
	rec.OnFlush = func(r FlushReport) {
		mu.Lock()
		flushed += r.Merged[Key{"shared", "counter"}]
		fmt.Printf("flushed %d\n", flushed)
		mu.Unlock()
	}
	for i := 0; i < workerRecords; i++ {
		if i%(workerRecords/workerRoles) == 0 {
			name := fmt.Sprintf("w%s_role_%d", id, i/(workerRecords/workerRoles))
			if _, err := s.PutRole(Contract{Role: name, Purpose: "multi-process test"}, time.Now()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Printf("role %s\n", name)
		}
		rec.Record("shared", "counter", Success, time.Microsecond, "")
		if i%50 == 49 {
			time.Sleep(40 * time.Millisecond)
		}
	}
	rec.Close()
	fmt.Printf("compacted %d\n", compactions.Load())
	fmt.Println("done")
	return 0
}

func TestMultiProcessWritersWithOneKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 8 processes")
	}
	root := t.TempDir()
	s, err := Open(root)
	require.NoError(t, err)
	_, err = s.PutRole(Contract{Role: "shared", Purpose: "counter"}, t0)
	require.NoError(t, err)
	newArtifact(t, s, "shared", "counter", "package artifact\nfunc Counter() int { return 1 }")

	const procs, victim = 8, 3
	type result struct {
		roles     []string
		flushed   int64
		compacted int64
		done      bool
		err       error
	}
	results := make([]result, procs)
	cmds := make([]*exec.Cmd, procs)
	var wg sync.WaitGroup
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerEnv+"="+strconv.Itoa(p), "FORGE_REGISTRY_TEST_STORE="+root)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		cmds[p] = cmd
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				switch {
				case len(f) == 2 && f[0] == "role":
					results[p].roles = append(results[p].roles, f[1])
				case len(f) == 2 && f[0] == "flushed":
					results[p].flushed, _ = strconv.ParseInt(f[1], 10, 64)
				case len(f) == 2 && f[0] == "compacted":
					results[p].compacted, _ = strconv.ParseInt(f[1], 10, 64)
				case len(f) == 1 && f[0] == "done":
					results[p].done = true
				}
			}
			results[p].err = cmds[p].Wait()
		}(p)
	}
	time.Sleep(500 * time.Millisecond) // the workers run for about 800 ms
	require.NoError(t, cmds[victim].Process.Signal(syscall.SIGKILL))
	wg.Wait()

	for p, r := range results {
		if p == victim {
			assert.Error(t, r.err, "the victim was killed")
			assert.False(t, r.done, "the victim must be killed mid-run; the workers are too fast for this machine")
			continue
		}
		require.NoError(t, r.err, "worker %d", p)
		assert.True(t, r.done)
		assert.Len(t, r.roles, workerRoles)
		assert.Equal(t, int64(workerRecords), r.flushed)
	}

	rep, err := s.Doctor()
	require.NoError(t, err)
	assert.False(t, rep.Damaged(), "doctor found damage: %+v", rep)

	roles, err := s.Roles()
	require.NoError(t, err)
	have := map[string]bool{}
	for _, r := range roles {
		have[r.Role] = true
	}
	for p, r := range results {
		for _, name := range r.roles {
			assert.True(t, have[name], "worker %d: role %s was added but is missing", p, name)
		}
	}

	a, err := s.Load("shared", "counter")
	require.NoError(t, err)
	survivors := int64((procs - 1) * workerRecords)
	assert.GreaterOrEqual(t, a.SuccessCount, survivors+results[victim].flushed, "a committed counter update was lost")
	assert.LessOrEqual(t, a.SuccessCount, survivors+workerRecords)
	t.Logf("success_count %d: survivors %d + victim flushed %d (the victim's unflushed window: %d at most)",
		a.SuccessCount, survivors, results[victim].flushed, survivors+workerRecords-a.SuccessCount)
	assert.Equal(t, int64(0), a.FailureCount)
	var compacted int64
	for _, r := range results {
		compacted += r.compacted
	}
	assert.Positive(t, compacted, "journals were compacted while the workers ran")

	// Folding what is left (the victim's journal, journals sealed at exit) changes no count.
	_, err = s.Compact()
	require.NoError(t, err)
	fresh, err := Open(root)
	require.NoError(t, err)
	b, err := fresh.Load("shared", "counter")
	require.NoError(t, err)
	assert.Equal(t, a.SuccessCount, b.SuccessCount, "compaction counted a record twice or lost one")
	st, err := fresh.Journals()
	require.NoError(t, err)
	assert.Zero(t, st.Journals)
	t.Logf("%d journal(s) compacted by the workers while they ran", compacted)
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
	natsstore "github.com/artifactforge/forge/registry/nats"
)

// The fleet test (issue 13): three `forge serve` processes, each connected to a different node of
// a 3-node NATS JetStream cluster on loopback (R3 buckets), share one store.
//
//   - 16 concurrent cold calls of one method, spread over the three, make exactly one generation:
//     the provider (a program that counts its runs in a file) runs once, the calls' outcomes
//     report one provider call in all, and the artifact is at generation 1.
//   - A bless through one process reaches the other two's next calls within 1 s (measured).
//   - The data bucket's stream leader is killed in the middle of a burst of role puts and
//     artifact updates (by the store backend, as the forge writes them): every acknowledged write
//     is read back afterwards, and the three processes keep answering calls.
func TestFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node NATS cluster and three forge processes")
	}
	c, err := embedded.StartCluster(t.TempDir(), 3)
	require.NoError(t, err)
	t.Cleanup(c.Stop)
	// Each process names one node only: its connection is to that node (the client learns the
	// others from the cluster, to fail over to).
	storeURL := func(i int) string { return c.Nodes[i].URL() + "/fleet?replicas=3" }

	dir := t.TempDir()
	counter := filepath.Join(dir, "generations")
	gen := filepath.Join(dir, "gen.sh")
	require.NoError(t, os.WriteFile(gen, []byte(`#!/bin/sh
cat >/dev/null
echo "$FORGE_ROLE.$FORGE_METHOD $$" >> "$FLEET_GEN_COUNT"
sleep 1
cat <<'EOF'
package artifact

import "strings"

func Upper(s string) string { return strings.ToUpper(s) }
EOF
`), 0o755))
	env := func(i int) []string {
		return []string{"FORGE_LOCAL_DIR=" + filepath.Join(dir, fmt.Sprintf("local%d", i)), "FLEET_GEN_COUNT=" + counter}
	}
	r := bin(t, nil, env(0), "--store", storeURL(0), "role", "add", "--role", "text", "--purpose", "string utilities")
	require.Equal(t, 0, r.code, r.stderr)

	const token = "fleet-admin"
	bases := make([]string, 3)
	procs := make([]*exec.Cmd, 3)
	fleetCallsOK.Store(0)
	for i := range bases {
		procs[i], bases[i] = startFleetServe(t, storeURL(i), env(i), "--provider", "command:"+gen, "--admin-token", token)
	}
	hc := &http.Client{Timeout: time.Minute} // a hang bound

	t.Run("ColdCallsGenerateOnce", func(t *testing.T) {
		const calls = 16
		outs := make([]forge.Outcome, calls)
		errs := make([]error, calls)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				outs[i], errs[i] = fleetCall(hc, bases[i%3], `{"s":"hi"}`)
			}()
		}
		close(start)
		wg.Wait()
		providerCalls, generated := 0, 0
		for i := range calls {
			require.NoError(t, errs[i], "call %d", i)
			require.True(t, outs[i].OK, "call %d: %+v", i, outs[i].Err)
			assert.JSONEq(t, `"HI"`, string(outs[i].Value))
			providerCalls += outs[i].Meta.ProviderCalls
			if outs[i].Meta.ProgramSource == forge.SourceGenerated {
				generated++
			}
		}
		assert.Equal(t, 1, providerCalls, "provider calls reported by the 16 outcomes")
		assert.Equal(t, 1, generated, "outcomes whose code was generated for them")
		runs, err := os.ReadFile(counter)
		require.NoError(t, err)
		assert.Equal(t, 1, strings.Count(string(runs), "\n"), "provider program runs across the fleet:\n%s", runs)
		s := openFleetBackend(t, storeURL(1), filepath.Join(dir, "reader"))
		a, err := s.Load("text", "upper")
		require.NoError(t, err)
		assert.Equal(t, 1, a.Generation)
		assert.Len(t, a.History, 1)
	})

	t.Run("BlessReachesTheOthersWithin1s", func(t *testing.T) {
		for _, b := range bases { // every process has the artifact warm
			o, err := fleetCall(hc, b, `{"s":"warm"}`)
			require.NoError(t, err)
			require.True(t, o.OK)
			require.NotContains(t, o.Meta.Decision, "blessed")
		}
		req, err := http.NewRequest("POST", bases[0]+"/v1/admin/bless/text/upper", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, string(body))
		acked := time.Now()
		var wg sync.WaitGroup
		lat := make([]time.Duration, 3)
		for i := 1; i < 3; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lat[i] = -1
				for time.Since(acked) < 10*time.Second { // a hang bound; the assertion is below
					o, err := fleetCall(hc, bases[i], `{"s":"x"}`)
					if err == nil && o.OK && strings.Contains(o.Meta.Decision, "blessed") {
						lat[i] = time.Since(acked)
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			}()
		}
		wg.Wait()
		for i := 1; i < 3; i++ {
			t.Logf("bless through process 0 seen by process %d's calls after %v (acknowledgement to the first blessed call's answer, polling every 5 ms)", i, lat[i])
			require.GreaterOrEqual(t, lat[i], time.Duration(0), "process %d never saw the bless", i)
			assert.Less(t, lat[i], time.Second, "process %d", i)
		}
	})

	t.Run("NodeKillLosesNoAcknowledgedWrite", func(t *testing.T) {
		testFleetNodeKill(t, c, storeURL, bases, hc, dir)
	})

	// Every answered call is counted once in the store: the three processes' counter flushes
	// (every second, and on the way out) merge without a lost update, across the node kill.
	t.Run("CountersAddUp", func(t *testing.T) {
		for i, p := range procs {
			require.NoError(t, p.Process.Signal(syscall.SIGTERM))
			require.NoError(t, p.Wait(), "process %d exits cleanly after the kill", i)
		}
		up := 0
		for !c.Nodes[up].Running() {
			up++
		}
		s := openFleetBackend(t, storeURL(up), filepath.Join(dir, "counters"))
		a, err := s.Load("text", "upper")
		require.NoError(t, err)
		r, err := s.Role("text")
		require.NoError(t, err)
		t.Logf("%d calls answered by the three processes; the store counts %d successes, %d failures, role usage %d", fleetCallsOK.Load(), a.SuccessCount, a.FailureCount, r.UsageCount)
		assert.Equal(t, fleetCallsOK.Load(), a.SuccessCount)
		assert.Zero(t, a.FailureCount)
		assert.Equal(t, fleetCallsOK.Load(), r.UsageCount)
	})
}

// testFleetNodeKill kills the data bucket's stream leader in the middle of a burst of writes
// made through three store backends, one per node, while the forge processes serve calls.
func testFleetNodeKill(t *testing.T, c *embedded.Cluster, storeURL func(int) string, bases []string, hc *http.Client, dir string) {
	stores := make([]registry.Backend, 3)
	for i := range stores {
		stores[i] = openFleetBackend(t, storeURL(i), filepath.Join(dir, fmt.Sprintf("writer%d", i)))
	}
	leader := c.NodeByName(dataLeader(t, stores[0]))
	require.NotNil(t, leader, "the data stream's leader is one of the nodes")
	t.Logf("killing %s, the leader of the data bucket's stream", leader.Name())
	rec, err := stores[0].Role("text")
	require.NoError(t, err)

	const writers = 6
	type result struct {
		roles     []string // acknowledged role puts
		updates   int      // acknowledged artifact updates
		genAcked  int      // highest generation acknowledged
		genTried  int      // highest generation attempted
		failed    int
		afterKill int // acknowledged after the kill
	}
	results := make([]result, writers)
	var killed atomic.Bool
	var ackedAfterKill atomic.Int64
	var total atomic.Int64
	burst, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	for w := range writers {
		s := stores[w%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[w]
			method := fmt.Sprintf("burst_%d", w)
			for i := 0; burst.Err() == nil; i++ {
				var err error
				if i%2 == 0 {
					role := fmt.Sprintf("burst_w%d_%d", w, i)
					_, err = s.PutRole(registry.Contract{Role: role, Purpose: fmt.Sprintf("written by writer %d, put %d", w, i)}, time.Now())
					if err == nil {
						r.roles = append(r.roles, role)
					}
				} else {
					var tried int
					var a *registry.Artifact
					a, err = s.Update("text", method, func(a *registry.Artifact, _ bool) error {
						a.Promote(fmt.Sprintf("package artifact\n\n// %d\nfunc Upper(s string) string { return s }\n", a.Generation+1), "regenerate:burst", "test", "v1", time.Now())
						a.ContractFingerprint = rec.Fingerprint
						tried = a.Generation
						return nil
					})
					r.genTried = max(r.genTried, tried)
					if err == nil {
						r.genAcked = a.Generation
						r.updates++
					}
				}
				if err != nil {
					r.failed++
				} else if killed.Load() {
					r.afterKill++
					ackedAfterKill.Add(1)
				}
				total.Add(1)
			}
		}()
	}
	// Warm calls through the three processes all along.
	var callsOK, callsFailed atomic.Int64
	var slowest atomic.Int64
	for i := range bases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for burst.Err() == nil {
				t0 := time.Now()
				o, err := fleetCall(hc, bases[i], `{"s":"k"}`)
				if d := time.Since(t0); int64(d) > slowest.Load() {
					slowest.Store(int64(d))
				}
				if err == nil && o.OK {
					callsOK.Add(1)
				} else {
					callsFailed.Add(1)
					t.Logf("process %d: call failed during the burst: %v %+v", i, err, o.Err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	deadline := time.Now().Add(time.Minute) // a hang bound
	for total.Load() < 150 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	leader.Stop()
	killed.Store(true)
	killedAt, before := time.Now(), total.Load()
	// Go on for 4 s, and until the cluster has taken 200 writes without the node (a loaded
	// machine's leader election may take seconds); 1 minute bounds a hang.
	for (time.Since(killedAt) < 4*time.Second || ackedAfterKill.Load() < 200) && time.Since(killedAt) < time.Minute {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the burst went on for %v after the kill", time.Since(killedAt).Round(time.Millisecond))
	stop()
	wg.Wait()

	var acked, failed, afterKill int
	for _, r := range results {
		acked += len(r.roles) + r.updates
		failed += r.failed
		afterKill += r.afterKill
	}
	t.Logf("burst: %d writes before the kill, %d in all; %d acknowledged (role puts and artifact updates), %d of them after the kill, %d failed (not acknowledged); calls during the burst: %d answered, %d failed, slowest %v",
		before, total.Load(), acked, afterKill, failed, callsOK.Load(), callsFailed.Load(), time.Duration(slowest.Load()))
	require.GreaterOrEqual(t, afterKill, 200, "the cluster took writes after losing a node")
	assert.Zero(t, callsFailed.Load(), "warm calls keep being answered while a node dies")

	// Every acknowledged write is there, read through a new connection to a surviving node.
	var survivor int
	for i, nd := range c.Nodes {
		if nd != leader {
			survivor = i
		}
	}
	s := openFleetBackend(t, storeURL(survivor), filepath.Join(dir, "checker"))
	roles, err := s.Roles()
	require.NoError(t, err)
	have := map[string]bool{}
	for _, r := range roles {
		have[r.Role] = true
	}
	lost := 0
	for w, r := range results {
		for _, role := range r.roles {
			if !have[role] {
				lost++
				t.Errorf("acknowledged role %s is lost", role)
			}
		}
		if r.genAcked == 0 {
			continue
		}
		a, err := s.Load("text", fmt.Sprintf("burst_%d", w))
		require.NoError(t, err)
		assert.GreaterOrEqual(t, a.Generation, r.genAcked, "writer %d: generation %d was acknowledged", w, r.genAcked)
		assert.LessOrEqual(t, a.Generation, r.genTried, "writer %d: no generation appears that was not written", w)
	}
	assert.Zero(t, lost)
	for i, b := range bases {
		o, err := fleetCall(hc, b, `{"s":"after"}`)
		require.NoError(t, err, "process %d", i)
		assert.True(t, o.OK, "process %d answers after the kill: %+v", i, o.Err)
	}
}

// dataLeader is the name of the server leading the store's data bucket stream.
func dataLeader(t *testing.T, b registry.Backend) string {
	t.Helper()
	fs, ok := b.(*natsstore.FleetStore)
	require.True(t, ok, "a nats:// store is a *nats.FleetStore")
	js, err := jetstream.New(fs.Store().Conn())
	require.NoError(t, err)
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := js.Stream(ctx, "KV_"+fs.Store().Name()+natsstore.DataBucketSuffix)
		if err == nil {
			if info, err := st.Info(ctx); err == nil && info.Cluster != nil && info.Cluster.Leader != "" {
				cancel()
				return info.Cluster.Leader
			}
		}
		cancel()
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no leader for the data bucket's stream")
	return ""
}

func openFleetBackend(t *testing.T, url, local string) registry.Backend {
	t.Helper()
	b, err := registry.OpenBackend(url, registry.OpenOptions{LocalDir: local, ClientName: "fleet test"})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// startFleetServe runs the built `forge serve` on the store url and returns the process and its
// base URL.
func startFleetServe(t *testing.T, url string, env []string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	path, err := forgeBinary()
	require.NoError(t, err)
	cmd := exec.Command(path, append([]string{"--store", url, "serve", "--addr", "127.0.0.1:0", "--no-mcp"}, extra...)...)
	cmd.Env = append(append(os.Environ(), "FORGE_PROVIDER=", "FORGE_SANDBOX=yaegi"), env...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &lockedWriter{w: &stderr}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("forge serve --store %s stderr:\n%s", url, lastLines(stderr.String(), 40))
		}
	})
	return cmd, waitServing(t, out, "forge serve --store "+url)
}

// fleetCallsOK counts the successful calls of text.upper made through fleetCall: the counters
// the three processes flush must add up to it.
var fleetCallsOK atomic.Int64

func fleetCall(c *http.Client, base, args string) (forge.Outcome, error) {
	o, err := fleetCallOnce(c, base, args)
	if err == nil && o.OK {
		fleetCallsOK.Add(1)
	}
	return o, err
}

func fleetCallOnce(c *http.Client, base, args string) (forge.Outcome, error) {
	var o forge.Outcome
	resp, err := c.Post(base+"/v1/call/text/upper", "application/json", strings.NewReader(args))
	if err != nil {
		return o, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return o, err
	}
	if err := json.Unmarshal(body, &o); err != nil {
		return o, fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	return o, nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

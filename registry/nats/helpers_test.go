package nats

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// testCtx bounds a test's NATS calls generously: only to turn a hang into a failure.
func testCtx(t testing.TB) context.Context {
	// A hang bound, not a latency target: a 3-node cluster in one test process on 2 cores shared
	// with the wasm and difftest packages (go test runs two packages at once) took 45 s in CI.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// single starts one embedded JetStream server for the test and returns its URL.
func single(t testing.TB) string {
	t.Helper()
	u, stop, err := embedded.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return u
}

// singleNoSync starts one embedded server that does not fsync each write (JetStream's default
// interval), for tests whose point is not durability and that write a lot.
func singleNoSync(t testing.TB) string {
	t.Helper()
	n, err := embedded.StartNode(embedded.NodeConfig{Name: "nosync", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return n.URL()
}

// cluster starts a 3-node JetStream cluster for the test.
func cluster(t testing.TB) *embedded.Cluster {
	t.Helper()
	c, err := embedded.StartCluster(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// open opens store name through servers (the first one is the node this client uses while it is
// up: the list is not shuffled), with replicas, closed at the end of the test.
func open(t testing.TB, name string, replicas int, servers ...string) *Store {
	t.Helper()
	cfg := &Config{Servers: servers, Name: name, Replicas: replicas}
	s, err := Open(testCtx(t), cfg, "forge-test", nats.DontRandomize(), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rotate puts the node i first in the server list.
func rotate(c *embedded.Cluster, i int) []string {
	var out []string
	for j := range c.Nodes {
		out = append(out, c.Nodes[(i+j)%len(c.Nodes)].URL())
	}
	return out
}

// streamLeader is the server name leading the bucket's stream.
func streamLeader(t testing.TB, s *Store, bucket string) string {
	t.Helper()
	js, err := jetstream.New(s.Conn())
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		st, err := js.Stream(testCtx(t), "KV_"+bucket)
		if err == nil {
			if info, err := st.Info(testCtx(t)); err == nil && info.Cluster != nil && info.Cluster.Leader != "" {
				return info.Cluster.Leader
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no leader for bucket %s", bucket)
	return ""
}

func connectedTo(s *Store) string {
	return strings.TrimPrefix(s.Conn().ConnectedUrl(), "nats://")
}

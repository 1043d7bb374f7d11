package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ReadyTimeout bounds how long a server may take to accept connections.
const ReadyTimeout = 15 * time.Second

// Start starts a single-node JetStream server that keeps its data under dir (created if
// needed) and listens on a free loopback port. It returns the client URL (nats://127.0.0.1:PORT) and
// a stop function that shuts the server down and waits for it (safe to call more than once).
//
// The server fsyncs every write before acknowledging it (JetStream's sync_interval: always): a
// single node has no replica to recover from, and the file store it stands in for fsyncs every
// write too. Cluster nodes keep JetStream's default (fsync every 2 minutes) and rely on an R3
// bucket's quorum of replicas instead.
func Start(dir string) (clientURL string, stop func(), err error) {
	n, err := startNode(nodeConfig{name: "forge-embedded", dir: dir, syncAlways: true})
	if err != nil {
		return "", nil, err
	}
	return n.URL(), n.Stop, nil
}

// Options tune StartWith.
type Options struct {
	// Host is the address to listen on (default 127.0.0.1). Any other than a loopback address
	// needs a Token: the server is then reachable from other machines.
	Host string
	// Port is the client port (0: a free one).
	Port int
	// Token, if set, is required of every client (nats://TOKEN@HOST:PORT, or $NATS_TOKEN).
	Token string
}

// StartWith is Start on the address o names, with a client token if o has one. It
// refuses to listen beyond loopback without a token. The returned URL has no credentials.
func StartWith(dir string, o Options) (clientURL string, stop func(), err error) {
	host := o.Host
	if host == "" {
		host = "127.0.0.1"
	}
	if o.Port < 0 || o.Port > 65535 {
		return "", nil, fmt.Errorf("nats: embedded server port %d: use 0 (a free port) to 65535", o.Port)
	}
	if o.Token == "" && !isLoopback(host) {
		return "", nil, fmt.Errorf("nats: an embedded server on %s would be reachable from other machines with no credentials: set a token ($NATS_TOKEN; clients set the same) or listen on 127.0.0.1", host)
	}
	n, err := startNode(nodeConfig{name: "forge-embedded", dir: dir, host: host, port: o.Port, token: o.Token, syncAlways: true})
	if err != nil {
		return "", nil, err
	}
	return n.URL(), n.Stop, nil
}

// isLoopback reports whether host is a loopback address or localhost.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Node is one embedded server.
type Node struct {
	cfg nodeConfig

	mu  sync.Mutex
	srv *server.Server
}

type nodeConfig struct {
	name        string
	dir         string
	host        string // "" : 127.0.0.1
	port        int    // 0: a free port
	token       string // "" : no authentication
	cluster     string
	clusterPort int // 0: a free port (cluster nodes only)
	routes      []*url.URL
	syncAlways  bool // fsync each write before its acknowledgement
}

// NodeConfig describes a single node started by StartNode (tests: a node without fsync, one with
// a token, one to stop and restart).
type NodeConfig struct {
	Name string
	Dir  string
	// Token, if set, is required of every client.
	Token string
	// SyncAlways fsyncs each write before acknowledging it (Start's choice).
	SyncAlways bool
}

// StartNode starts a single node on a free loopback port as c describes.
func StartNode(c NodeConfig) (*Node, error) {
	return startNode(nodeConfig{name: c.Name, dir: c.Dir, token: c.Token, syncAlways: c.SyncAlways})
}

func startNode(c nodeConfig) (*Node, error) {
	if c.dir == "" {
		return nil, errors.New("nats: an embedded server needs a data directory (e.g. --nats-embedded ./forge-nats)")
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("nats: create the embedded server's directory %s: %w (check the path and its permissions)", c.dir, err)
	}
	port := c.port
	if port == 0 {
		port = -1 // RANDOM_PORT
	}
	host := c.host
	if host == "" {
		host = "127.0.0.1"
	}
	o := &server.Options{
		ServerName: c.name,
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   c.dir,
		NoLog:      true,
		NoSigs:     true,
		// Bounds, so that a test machine never reserves a fraction of its RAM and disk.
		JetStreamMaxMemory: 256 << 20,
		JetStreamMaxStore:  4 << 30,
		SyncAlways:         c.syncAlways,
		Authorization:      c.token,
	}
	if c.cluster != "" {
		cp := c.clusterPort
		if cp == 0 {
			cp = -1
		}
		o.Cluster = server.ClusterOpts{Name: c.cluster, Host: "127.0.0.1", Port: cp}
		o.Routes = c.routes
	}
	srv, err := server.NewServer(o)
	if err != nil {
		return nil, fmt.Errorf("nats: configure the embedded server %s: %w", c.name, err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(ReadyTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("nats: the embedded server %s did not accept connections within %v (is %s writable? is loopback usable?)", c.name, ReadyTimeout, c.dir)
	}
	// Later restarts reuse the ports, so that clients and routes find the node where it was.
	c.port = srv.Addr().(*net.TCPAddr).Port
	if c.cluster != "" {
		c.clusterPort = srv.ClusterAddr().Port
	}
	return &Node{cfg: c, srv: srv}, nil
}

// Name is the server's name (as reported in stream cluster info).
func (n *Node) Name() string { return n.cfg.name }

// URL is the node's client URL.
func (n *Node) URL() string {
	host := n.cfg.host
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1" // a wildcard listener is reached on loopback from this machine
	}
	return "nats://" + net.JoinHostPort(host, strconv.Itoa(n.cfg.port))
}

// Running reports whether the node is up.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.srv != nil
}

// Stop shuts the node down and waits until it has. A stopped node keeps its data directory and can
// be restarted. Stop on a stopped node does nothing.
func (n *Node) Stop() {
	n.mu.Lock()
	srv := n.srv
	n.srv = nil
	n.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// Restart starts a stopped node again on its former ports with its data directory.
func (n *Node) Restart() error {
	if n.Running() {
		return fmt.Errorf("nats: node %s is running; stop it first", n.cfg.name)
	}
	nn, err := startNode(n.cfg)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.srv = nn.srv
	n.mu.Unlock()
	return nil
}

// Cluster is a JetStream cluster of embedded nodes on loopback (for tests: no authentication).
type Cluster struct {
	Nodes []*Node
}

// StartCluster starts an n-node JetStream cluster (n >= 3 for R3 buckets) with its data under dir
// and waits until JetStream has a meta leader. Stop it with Stop.
func StartCluster(dir string, n int) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("nats: a cluster needs at least one node, not %d", n)
	}
	c := &Cluster{}
	name := "forge-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	// A JetStream cluster needs its routes configured up front (gossip alone is refused), so the
	// route ports are reserved first. Every node routes to every other one, which also lets a node
	// restarted later find the cluster whichever nodes are down at that moment.
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		cfg := nodeConfig{name: "n" + strconv.Itoa(i+1), dir: filepath.Join(dir, "n"+strconv.Itoa(i+1)), cluster: name, clusterPort: ports[i]}
		for j, p := range ports {
			if j != i {
				cfg.routes = append(cfg.routes, &url.URL{Scheme: "nats", Host: "127.0.0.1:" + strconv.Itoa(p)})
			}
		}
		c.Nodes = append(c.Nodes, &Node{cfg: cfg})
	}
	// The nodes start together: each waits for its routes before it accepts clients.
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, nd := range c.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started, err := startNode(nd.cfg)
			if err != nil {
				errs[i] = err
				return
			}
			nd.mu.Lock()
			nd.cfg, nd.srv = started.cfg, started.srv
			nd.mu.Unlock()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.waitJetStream(30 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.waitPlacement(30 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// waitJetStream waits until every running node answers JetStream account requests (which needs a
// meta leader and the node's view of the cluster).
func (c *Cluster) waitJetStream(within time.Duration) error {
	deadline := time.Now().Add(within)
	for _, nd := range c.Nodes {
		for {
			err := pingJetStream(nd.URL())
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("nats: cluster node %s has no JetStream after %v: %w", nd.Name(), within, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// waitPlacement waits until a stream replicated on every node can be created (every peer is
// known to the meta leader and online), and removes it.
func (c *Cluster) waitPlacement(within time.Duration) error {
	nc, err := nats.Connect(c.URLs(), nats.Timeout(time.Second))
	if err != nil {
		return fmt.Errorf("nats: connect to the cluster: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "forge_cluster_ready", Subjects: []string{"forge.cluster.ready"}, Replicas: len(c.Nodes), Storage: jetstream.MemoryStorage})
		if err == nil {
			err = js.DeleteStream(ctx, "forge_cluster_ready")
		}
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nats: the cluster cannot place a stream on all %d nodes after %v: %w", len(c.Nodes), within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func pingJetStream(u string) error {
	nc, err := nats.Connect(u, nats.Timeout(time.Second), nats.NoReconnect())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = js.AccountInfo(ctx)
	return err
}

// freePorts reserves n distinct loopback ports the kernel says are free (held open together, then
// released for the servers to bind).
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("nats: reserve a loopback port for a cluster route: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// URLs is every node's client URL, comma-separated, as a NATS client takes them.
func (c *Cluster) URLs() string {
	us := make([]string, len(c.Nodes))
	for i, nd := range c.Nodes {
		us[i] = nd.URL()
	}
	return strings.Join(us, ",")
}

// NodeByName finds a node by server name (nil if none).
func (c *Cluster) NodeByName(name string) *Node {
	for _, nd := range c.Nodes {
		if nd.cfg.name == name {
			return nd
		}
	}
	return nil
}

// Stop stops every node.
func (c *Cluster) Stop() {
	var wg sync.WaitGroup
	for _, nd := range c.Nodes {
		wg.Add(1)
		go func() { defer wg.Done(); nd.Stop() }()
	}
	wg.Wait()
}

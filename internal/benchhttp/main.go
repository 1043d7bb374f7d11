// Command benchhttp measures forge's HTTP edge under load against a floor, in the same run: it
// builds a throwaway store holding one warm method (text.upper, no model), starts `forge serve`
// on it (the default backend) and, in its own process, a plain net/http handler that decodes the
// same JSON and encodes an answer (the floor); then it runs hey (Debian package `hey`) against
// the floor, /v1/call and /mcp in turn, interleaved, for -rounds rounds, and prints the medians.
//
//	make bench-http                       # builds bin/forge, then:
//	go run ./internal/benchhttp -forge bin/forge -rounds 5 -duration 5s -c 64
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/artifactforge/forge/internal/edgefloor"
	"github.com/artifactforge/forge/registry"
)

const upper = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"

const callBody = `{"s":"hello"}`

// mcpRequest is the same call as an MCP tools/call of forge_call.
func mcpRequest(id int) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"forge_call","arguments":{"role":"text","method":"upper","args":{"s":"hello"}}}}`
}

// result is one hey run.
type result struct {
	rps, p50, p99 float64 // calls/s, seconds
	n             int     // calls answered
	// srv and cli are the CPU seconds per call of the serving process and of the load
	// generator: on a machine shared with other jobs, calls/s moves with their load, the CPU a
	// call costs much less.
	srv, cli float64
}

// cores is the CPU the serving process and the load generator used together per second of the
// run: on a machine other jobs share, the pair gets a share of the cores that moves between
// rounds, and calls/s follows that share and the CPU a call costs.
func (x result) cores() float64 { return x.rps * (x.srv + x.cli) }

// cpuBound is the share of the floor's calls/s a target would reach with the CPU it and its load
// generator spend per call, were the pair given the floor's share of the cores: the gap the CPU per
// call explains. The measured share's distance from it is what the share of cores explains.
func cpuBound(floor, x result) float64 {
	if x.srv+x.cli == 0 {
		return 0
	}
	return (floor.srv + floor.cli) / (x.srv + x.cli)
}

func main() {
	forgeBin := flag.String("forge", "bin/forge", "the forge binary to serve with")
	baseline := flag.String("baseline", "", "another forge binary (say, main's) served too: its /v1/call is the target call-base, interleaved")
	rounds := flag.Int("rounds", 5, "rounds; each runs hey against every target once, in turn")
	dur := flag.Duration("duration", 5*time.Second, "each hey run's length")
	conns := flag.Int("c", 64, "hey's concurrent connections")
	only := flag.String("targets", "floor,call,go-call,mcp", "targets, comma-separated: floor and call (hey), go-call and mcp (this program's client); with -baseline also call-base (hey) and mcp-base")
	flag.Parse()
	if err := run(*forgeBin, *baseline, *rounds, *dur, *conns, strings.Split(*only, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "benchhttp:", err)
		os.Exit(1)
	}
}

// startServe runs `forge serve` of bin on a store of its own and returns its base URL and its
// process's CPU time so far.
func startServe(bin string) (string, func() time.Duration, func(), error) {
	dir, err := os.MkdirTemp("", "forge-benchhttp-")
	if err != nil {
		return "", nil, nil, err
	}
	fail := func(err error) (string, func() time.Duration, func(), error) {
		os.RemoveAll(dir)
		return "", nil, nil, err
	}
	if err := buildStore(dir); err != nil {
		return fail(fmt.Errorf("build the store: %w", err))
	}
	addr, err := freeAddr()
	if err != nil {
		return fail(err)
	}
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return fail(err)
	}
	srv := exec.Command(bin, "--store", dir, "serve", "--addr", addr)
	srv.Stdout, srv.Stderr = logf, logf // as under a service manager: the request log goes to a file
	if err := srv.Start(); err != nil {
		logf.Close()
		return fail(fmt.Errorf("start %s serve: %w (build it with make build)", bin, err))
	}
	stop := func() { srv.Process.Signal(os.Interrupt); srv.Wait(); logf.Close(); os.RemoveAll(dir) }
	base := "http://" + addr
	if err := waitReady(base); err != nil {
		stop()
		return "", nil, nil, err
	}
	pid := srv.Process.Pid
	return base, func() time.Duration { return procCPU(pid) }, stop, nil
}

// procCPU is the user and system CPU time of process pid so far (Linux: /proc/PID/stat; 0
// elsewhere, and the CPU columns then read 0).
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(data, []byte(") ")) // past the command name, which may hold spaces
	if !ok {
		return 0
	}
	fs := strings.Fields(string(rest)) // from the state, the stat's 3rd field: utime is its 14th
	if len(fs) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fs[11], 10, 64)
	st, _ := strconv.ParseInt(fs[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is Linux's USER_HZ, the unit of /proc/PID/stat's times (100 on every architecture
// Go supports there).
const clockTicks = 100

func run(forgeBin, baselineBin string, rounds int, dur time.Duration, conns int, targets []string) error {
	heyBin, err := exec.LookPath("hey")
	if err != nil {
		return errors.New("hey is not on PATH: install it (Debian/Ubuntu: apt-get install -y hey; or go install github.com/rakyll/hey@latest)")
	}
	base, serveCPU, stop, err := startServe(forgeBin)
	if err != nil {
		return err
	}
	defer stop()
	var baseBase string
	var baseCPU func() time.Duration
	if baselineBin != "" {
		var stopBase func()
		if baseBase, baseCPU, stopBase, err = startServe(baselineBin); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		defer stopBase()
		if err := post(baseBase+"/v1/call/text/upper", callBody, nil); err != nil {
			return fmt.Errorf("baseline warm call: %w", err)
		}
	}

	floorLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	floor := &http.Server{Handler: http.HandlerFunc(edgefloor.Handler)}
	go floor.Serve(floorLn)
	defer floor.Close()

	// Warm: the first call compiles the method.
	if err := post(base+"/v1/call/text/upper", callBody, nil); err != nil {
		return fmt.Errorf("warm call: %w", err)
	}
	session, err := mcpSession(base)
	if err != nil {
		return fmt.Errorf("mcp session: %w", err)
	}
	if err := post(base+"/mcp", mcpRequest(1), mcpHeaders(session)); err != nil {
		return fmt.Errorf("warm mcp call: %w", err)
	}

	type target struct {
		name string
		run  func() (result, error)
		cpu  func() time.Duration // the serving process's CPU time so far
	}
	floorURL, callURL := "http://"+floorLn.Addr().String()+"/v1/call/text/upper", base+"/v1/call/text/upper"
	// hey sends one body on every connection: an MCP session refuses a request ID already in
	// flight, so /mcp is loaded by this program's own client (a session and IDs per connection),
	// and /v1/call by the same client for the /mcp comparison.
	all := map[string]target{
		"floor":   {"floor (net/http)", func() (result, error) { return hey(heyBin, floorURL, callBody, nil, conns, dur) }, selfCPU},
		"call":    {"/v1/call", func() (result, error) { return hey(heyBin, callURL, callBody, nil, conns, dur) }, serveCPU},
		"go-call": {"/v1/call (go)", func() (result, error) { return load(base, false, conns, dur) }, serveCPU},
		"mcp":     {"/mcp (go)", func() (result, error) { return load(base, true, conns, dur) }, serveCPU},
	}
	if baseBase != "" {
		all["call-base"] = target{"/v1/call baseline", func() (result, error) {
			return hey(heyBin, baseBase+"/v1/call/text/upper", callBody, nil, conns, dur)
		}, baseCPU}
		all["mcp-base"] = target{"/mcp (go) baseline", func() (result, error) { return load(baseBase, true, conns, dur) }, baseCPU}
	}
	var ts []target
	for _, n := range targets {
		t, ok := all[strings.TrimSpace(n)]
		if !ok {
			return fmt.Errorf("no target %q: name floor, call, go-call or mcp (call-base and mcp-base need -baseline)", n)
		}
		ts = append(ts, t)
	}
	res := make([][]result, len(ts))
	fmt.Printf("hey -c %d -z %v, %d rounds, targets interleaved (every other round reversed); load average at start: %s\n", conns, dur, rounds, loadavg())
	for r := 0; r < rounds; r++ {
		for k := range ts {
			i := k
			if r%2 == 1 { // every other round in reverse: no target always runs first
				i = len(ts) - 1 - k
			}
			t := ts[i]
			cpu0 := t.cpu()
			x, err := t.run()
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			if x.n > 0 {
				x.srv = (t.cpu() - cpu0).Seconds() / float64(x.n)
			}
			res[i] = append(res[i], x)
			fmt.Printf("  round %d %-17s %8.0f calls/s  p50 %6.2f ms  p99 %6.2f ms  CPU/call %5.1f us serving, %5.1f us load  %4.2f cores\n",
				r+1, t.name, x.rps, x.p50*1e3, x.p99*1e3, x.srv*1e6, x.cli*1e6, x.cores())
		}
	}
	fmt.Printf("\nmedians of %d rounds (load average at end: %s)\n", rounds, loadavg())
	fmt.Printf("%-17s %10s %9s %9s %12s %11s %11s %11s %6s %9s\n", "target", "calls/s", "p50 ms", "p99 ms", "vs floor c/s", "p99 x floor", "serve us/c", "load us/c", "cores", "CPU-bound")
	var floorRPS, floorP99 float64
	var floorMed result
	for i, t := range ts {
		rps, p50, p99 := median(res[i], func(x result) float64 { return x.rps }), median(res[i], func(x result) float64 { return x.p50 }), median(res[i], func(x result) float64 { return x.p99 })
		srv, cli := median(res[i], func(x result) float64 { return x.srv }), median(res[i], func(x result) float64 { return x.cli })
		med := result{rps: rps, srv: srv, cli: cli}
		if i == 0 && t.name == all["floor"].name {
			floorRPS, floorP99, floorMed = rps, p99, med
		}
		vs, px, cb := "", "", ""
		if floorRPS > 0 {
			vs, px = fmt.Sprintf("%.0f%%", 100*rps/floorRPS), fmt.Sprintf("%.2fx", p99/floorP99)
			cb = fmt.Sprintf("%.0f%%", 100*cpuBound(floorMed, med))
		}
		fmt.Printf("%-17s %10.0f %9.2f %9.2f %12s %11s %11.1f %11.1f %6.2f %9s\n", t.name, rps, p50*1e3, p99*1e3, vs, px, srv*1e6, cli*1e6,
			median(res[i], result.cores), cb)
	}
	return nil
}

// buildStore writes the role text (method upper) and its artifact straight into dir: no model.
func buildStore(dir string) error {
	s, err := registry.Open(dir)
	if err != nil {
		return err
	}
	rec, err := s.PutRole(registry.Contract{Role: "text", Purpose: "string utilities", Methods: map[string]string{"upper": "func Upper(s string) string"}}, time.Now())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.ArtifactPath("text", "upper")), 0o755); err != nil {
		return err
	}
	a := &registry.Artifact{SchemaVersion: registry.SchemaVersion, Role: "text", Method: "upper", Lifecycle: registry.Durable, ContractFingerprint: rec.Fingerprint}
	a.Promote(upper, "initial_forge", "benchhttp", "pv1", time.Now())
	data, err := a.Encode()
	if err != nil {
		return err
	}
	return os.WriteFile(s.ArtifactPath("text", "upper"), data, 0o644)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitReady(base string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("forge serve did not become ready within 60s")
}

func mcpHeaders(session string) map[string]string {
	return map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Session-Id": session}
}

func post(url, body string, hdr map[string]string) error {
	_, err := postResp(url, body, hdr)
	return err
}

func postResp(url, body string, hdr map[string]string) (*http.Response, error) {
	return postWith(http.DefaultClient, url, body, hdr)
}

func postWith(client *http.Client, url, body string, hdr map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(context.Background(), "POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: %s: %s", url, resp.Status, data)
	}
	if bytes.Contains(data, []byte(`"isError":true`)) || bytes.Contains(data, []byte(`"ok":false`)) {
		return nil, fmt.Errorf("%s: the call failed: %s", url, data)
	}
	return resp, nil
}

// mcpSession initializes an MCP session over streamable HTTP and returns its id.
func mcpSession(base string) (string, error) { return mcpSessionWith(http.DefaultClient, base) }

func mcpSessionWith(client *http.Client, base string) (string, error) {
	h := map[string]string{"Accept": "application/json, text/event-stream"}
	resp, err := postWith(client, base+"/mcp", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"benchhttp","version":"1"}}}`, h)
	if err != nil {
		return "", err
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		return "", errors.New("no Mcp-Session-Id in the initialize answer")
	}
	h["Mcp-Session-Id"] = id
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	r2, err := client.Do(req)
	if err != nil {
		return "", err
	}
	r2.Body.Close()
	return id, nil
}

// endSession ends an MCP session (DELETE with its id).
func endSession(client *http.Client, base, session string) {
	req, err := http.NewRequest("DELETE", base+"/mcp", nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", session)
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
	}
}

var (
	rpsRe    = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	pctRe    = regexp.MustCompile(`(\d+)%%? in ([0-9.]+) secs`)
	statusRe = regexp.MustCompile(`\[(\d+)\]\s+(\d+) responses`)
)

// hey runs hey once and parses calls/s, p50 and p99; any answer but 200 or any error fails it.
func hey(bin, url, body string, hdr map[string]string, conns int, dur time.Duration) (result, error) {
	args := []string{"-z", dur.String(), "-c", strconv.Itoa(conns), "-m", "POST", "-T", "application/json", "-d", body}
	for k, v := range hdr {
		if k != "Content-Type" {
			args = append(args, "-H", k+": "+v)
		}
	}
	cmd := exec.Command(bin, append(args, url)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("hey: %w: %s", err, out)
	}
	x, err := parseHey(url, out)
	if x.n > 0 {
		x.cli = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds() / float64(x.n)
	}
	return x, err
}

// parseHey reads calls/s, p50 and p99 from hey's report; any status but 200, any error, or a
// report it cannot read fails it.
func parseHey(url string, out []byte) (result, error) {
	var x result
	if m := rpsRe.FindSubmatch(out); m != nil {
		x.rps, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	for _, m := range pctRe.FindAllSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(string(m[2]), 64)
		switch string(m[1]) {
		case "50":
			x.p50 = v
		case "99":
			x.p99 = v
		}
	}
	for _, m := range statusRe.FindAllSubmatch(out, -1) {
		if string(m[1]) == "200" {
			x.n, _ = strconv.Atoi(string(m[2]))
		}
		if string(m[1]) != "200" {
			return x, fmt.Errorf("%s answers with status %s (%s times)", url, m[1], m[2])
		}
	}
	if bytes.Contains(out, []byte("Error distribution")) {
		return x, fmt.Errorf("errors under load:\n%s", out[bytes.Index(out, []byte("Error distribution")):])
	}
	if x.rps == 0 || x.p99 == 0 {
		return x, fmt.Errorf("could not read hey's report:\n%s", out)
	}
	return x, nil
}

func median(xs []result, f func(result) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func loadavg() string {
	f, err := os.Open("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	if fs := strings.Fields(line); len(fs) >= 3 {
		return strings.Join(fs[:3], " ")
	}
	return "unknown"
}

// load is a closed-loop load generator like hey's: conns workers, each on a connection of its own
// (and, for MCP, a session of its own with increasing request IDs), calling for dur.
func load(base string, mcp bool, conns int, dur time.Duration) (result, error) {
	cpu0 := selfCPU() // the load's: this process serves nothing else meanwhile
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	lats := make([][]time.Duration, conns)
	errs := make(chan error, conns)
	start := time.Now()
	end := start.Add(dur)
	for w := 0; w < conns; w++ {
		go func(w int) {
			var hdr map[string]string
			url := base + "/v1/call/text/upper"
			if mcp {
				session, err := mcpSessionWith(client, base)
				if err != nil {
					errs <- err
					return
				}
				hdr, url = mcpHeaders(session), base+"/mcp"
				defer endSession(client, base, session) // no session outlives its run: they would weigh on the next ones
			}
			for id := 1; time.Now().Before(end); id++ {
				body := callBody
				if mcp {
					body = mcpRequest(id)
				}
				t0 := time.Now()
				if _, err := postWith(client, url, body, hdr); err != nil {
					errs <- err
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
			errs <- nil
		}(w)
	}
	var first error
	for w := 0; w < conns; w++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return result{}, first
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return result{}, errors.New("no call completed")
	}
	return result{rps: float64(len(all)) / time.Since(start).Seconds(), n: len(all),
		p50: all[len(all)/2].Seconds(), p99: all[len(all)*99/100].Seconds(),
		cli: (selfCPU() - cpu0).Seconds() / float64(len(all))}, nil
}

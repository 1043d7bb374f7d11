package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// HTTPRequest is an HTTP request made through the host API.
type HTTPRequest struct {
	Method string            `json:"method"`
	URL    string            `json:"url"`
	Header map[string]string `json:"header,omitempty"`
	Body   string            `json:"body,omitempty"`
}

// HTTPResponse is what the host API returns for an HTTP request: the body is already read (and capped).
type HTTPResponse struct {
	Status int               `json:"status"`
	Header map[string]string `json:"header,omitempty"`
	Body   string            `json:"body"`
}

// Caps on what the host takes from guest code, the same for every backend. They hold whatever
// Limits say, so one call cannot make the host hold more than about Limits.MemoryBytes of its data.
const (
	// MaxErrorBytes bounds the message of an error a call returns (a returned error, a panic, a
	// host failure): the rest is cut (see CapMessage). Failure reasons stored with an artifact
	// should use the same bound.
	MaxErrorBytes = 4 << 10
	// MaxLogLines bounds the log lines of one call; Limits.OutputBytes bounds their bytes (each
	// line counts its length plus one, so empty lines are not free).
	MaxLogLines = 1000
	// MaxHostRequestBytes bounds one host API request of guest code (an HTTP request with its
	// body, a log line): a larger one is refused before the host reads it.
	MaxHostRequestBytes = 8 << 20
	// MaxCallArgsBytes bounds the JSON args of one delegated call (host.Call), checked before
	// anything parses or splits them.
	MaxCallArgsBytes = 1 << 20
)

// CapMarker is the fmt format CapMessage appends to a cut text (%d: the number of bytes cut).
const CapMarker = " [... %d more bytes cut]"

// CapMessage returns s if it is at most MaxErrorBytes long, else its first MaxErrorBytes bytes
// (cut at a UTF-8 boundary) followed by CapMarker.
func CapMessage(s string) string {
	if len(s) <= MaxErrorBytes {
		return s
	}
	cut := MaxErrorBytes
	for cut > MaxErrorBytes-4 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(CapMarker, len(s)-cut)
}

// CapError returns err as an *Error whose message is at most MaxErrorBytes (see CapMessage): a
// copy when it had to be cut. Backends pass every error a call returns through it (Host.Finish
// does).
func CapError(err error) *Error {
	e := AsError(err)
	if e == nil || len(e.Message) <= MaxErrorBytes {
		return e
	}
	c := *e
	c.Message = CapMessage(c.Message)
	return &c
}

// Host is the one implementation of the host API policy (forge/host) that every backend exposes to
// guest code: it grants only what Capabilities allow, caps sizes and times, and records the evidence
// the classifier needs (host call in flight, upstream read, host failures, policy violations).
// One Host serves one Run; its methods are safe for concurrent use.
type Host struct {
	ctx    context.Context
	caps   Capabilities
	limits Limits
	call   CallFunc
	replay bool // Input.Replay: only GET and HEAD go out

	inFlight atomic.Int32
	cutShort atomic.Bool // a host call was running when ctx ended
	// Delegation: tree is shared by every Host of one delegation chain (nil when the role can
	// neither delegate nor be delegated to with HTTP); delegating counts this Host's running
	// Calls, callEpoch is tree.cut when the running Call began (see InFlight).
	tree       *delegTree
	delegating atomic.Int32
	callEpoch  atomic.Int64
	calls      atomic.Int32
	upstream   atomic.Bool
	mu         sync.Mutex
	logs       []string
	logBytes   int
	logFull    bool // a log cap was reached: later lines are dropped
	violation  *Error
	failure    *Error
}

// The transports are shared by every Host so connections are reused; redirects are re-checked
// against the allowlist by the Host that made the request (see Host.HTTP). publicTransport refuses
// to connect to any address that is not public (see publicAddr): an allowed name must not lead to
// the loopback interface, the private network or a cloud metadata service, whatever its DNS says
// (DNS rebinding). anyTransport is for requests whose allowlist entry names such an address on
// purpose: an IP literal, localhost, or a role granted HTTPCap.Private. Keeping the two apart keeps
// a connection made under one rule from being reused under the other.
var (
	publicTransport = newTransport(true)
	anyTransport    = newTransport(false)
)

func newTransport(publicOnly bool) *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if publicOnly {
		d.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return err
			}
			if !publicAddr(ip) {
				return &privateAddrError{addr: ip}
			}
			return nil
		}
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
	}
}

// privateAddrError is publicTransport's refusal to connect.
type privateAddrError struct{ addr netip.Addr }

func (e *privateAddrError) Error() string {
	return "address " + e.addr.String() + " is not public"
}

// nonPublic are the ranges an allowed name may not resolve to unless the role says so: besides
// what netip classifies (loopback, private, link-local, multicast, unspecified), the shared
// address space of carrier-grade NAT, IETF and documentation ranges, and the IPv6 unique-local,
// discard and NAT64 prefixes (NAT64 can embed any IPv4 address).
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// publicAddr reports whether ip is an address on the public internet.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// namesAddress reports whether a URL's host names its address itself (an IP literal or localhost),
// so that an allowlist entry matching it already says where the request goes.
func namesAddress(u *url.URL) bool {
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// NewHost returns the host API for one call: ctx bounds every host call, in.Caps says what is
// granted, in.Limits caps logs, in.Call serves delegation.
func NewHost(ctx context.Context, in Input) *Host {
	h := &Host{ctx: ctx, caps: in.Caps, limits: in.Limits.WithDefaults(), call: in.Call, replay: in.Replay}
	if in.Caps.Call || in.Caps.HTTP != nil {
		h.tree, _ = ctx.Value(treeKey{}).(*delegTree)
		if h.tree == nil && in.Caps.Call {
			h.tree = &delegTree{}
		}
	}
	return h
}

// delegTree is what the Hosts of one delegation chain share: whether the chain is blocked on
// external work right now (an HTTP request, a provider call or another generation the forge
// waits for), and how many such waits a deadline has cut short. A chain is linear (a guest
// waits for its host.Call), so a Host whose Call is running reads its descendants' state here.
type delegTree struct {
	external atomic.Int32
	cut      atomic.Int64
	// managed: the CallFunc runs nested calls in sandboxes that report their external work
	// here (the forge, see ManagedCall). For any other CallFunc the whole Call is external.
	managed atomic.Bool
}

type treeKey struct{}

// ManagedCall is what a CallFunc that runs the nested call in a sandbox of this process (the
// forge) calls first: from then on the caller's Host counts the nested call's time as in flight
// only while the chain is blocked on external work (HTTP, ExternalWork), not while it computes.
func ManagedCall(ctx context.Context) {
	if t, _ := ctx.Value(treeKey{}).(*delegTree); t != nil && !t.managed.Load() {
		t.managed.Store(true)
	}
}

// ExternalWork marks the delegation chain of ctx as blocked on work outside any sandbox (the
// forge's provider calls, waits for a generation made by another caller) until the returned
// func is called; see Host.InFlight. Outside a delegated call it does nothing.
func ExternalWork(ctx context.Context) func() {
	t, _ := ctx.Value(treeKey{}).(*delegTree)
	if t == nil {
		return func() {}
	}
	t.external.Add(1)
	return func() {
		if ctx.Err() != nil {
			t.cut.Add(1)
		}
		t.external.Add(-1)
	}
}

// InFlight reports whether the call is blocked on external work right now, or was when the
// call's context ended; backends ask it when a deadline hits. External work is an HTTP request
// of this call, or of a call it delegated to (transitively), or a provider call or generation
// wait the forge makes for one; a delegated call that is computing in its sandbox is not (its
// time is code's time: RATIONALE, delegation). The cut-short half makes the answer independent
// of who wins the race between the host call noticing the deadline and the backend classifying it.
func (h *Host) InFlight() bool {
	if h.inFlight.Load() > 0 || h.cutShort.Load() {
		return true
	}
	t := h.tree
	return t != nil && h.delegating.Load() > 0 && (!t.managed.Load() || t.external.Load() > 0 || t.cut.Load() != h.callEpoch.Load())
}

// Calls is the number of host calls made so far.
func (h *Host) Calls() int { return int(h.calls.Load()) }

// UpstreamRead reports whether guest code has received upstream data (an HTTP body or a Call result).
func (h *Host) UpstreamRead() bool { return h.upstream.Load() }

// Logs returns the log lines recorded so far.
func (h *Host) Logs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.logs...)
}

// Violation returns the first policy violation the guest attempted, or nil.
func (h *Host) Violation() *Error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.violation
}

func (h *Host) deny(format string, args ...any) *Error {
	e := &Error{Kind: KindPolicy, Message: fmt.Sprintf(format, args...)}
	h.mu.Lock()
	if h.violation == nil {
		h.violation = e
	}
	h.mu.Unlock()
	return e
}

func (h *Host) fail(e *Error) *Error {
	h.mu.Lock()
	if h.failure == nil {
		h.failure = e
	}
	h.mu.Unlock()
	return e
}

func (h *Host) begin() func() {
	h.calls.Add(1)
	h.inFlight.Add(1)
	t := h.tree
	if t != nil {
		t.external.Add(1)
	}
	return func() {
		if h.ctx.Err() != nil {
			h.cutShort.Store(true)
			if t != nil {
				t.cut.Add(1)
			}
		}
		h.inFlight.Add(-1)
		if t != nil {
			t.external.Add(-1)
		}
	}
}

// refuse records e as the call's violation (it fails even if the code recovers) and returns it.
func (h *Host) refuse(e *Error) *Error {
	h.mu.Lock()
	if h.violation == nil {
		h.violation = e
	}
	h.mu.Unlock()
	return e
}

// Log records one log line (Capabilities.Log). A call keeps at most MaxLogLines lines and
// Limits.OutputBytes bytes (each line counts one byte more than its length); later lines are
// dropped and the last kept line says so.
func (h *Host) Log(msg string) error {
	if !h.caps.Log {
		return h.deny("host.Log not granted: the role has no log capability")
	}
	appendLog(h, msg)
	return nil
}

// LogBytes is Log for a line still in guest memory: only a line that fits is copied.
func (h *Host) LogBytes(msg []byte) error {
	if !h.caps.Log {
		return h.deny("host.Log not granted: the role has no log capability")
	}
	appendLog(h, msg)
	return nil
}

// AppendLog records output the guest printed (stdout); it is kept only when Log is granted, under
// the same caps as Log.
func (h *Host) AppendLog(msg string) {
	if h.caps.Log {
		appendLog(h, msg)
	}
}

// AppendLogBytes is AppendLog for output still in guest memory.
func (h *Host) AppendLogBytes(msg []byte) {
	if h.caps.Log {
		appendLog(h, msg)
	}
}

func appendLog[T string | []byte](h *Host, msg T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.logFull {
		return
	}
	h.logBytes += len(msg) + 1
	switch {
	case h.logBytes > h.limits.OutputBytes:
		h.logs, h.logFull = append(h.logs, "[log truncated: output cap reached]"), true
	case len(h.logs) >= MaxLogLines-1:
		h.logs, h.logFull = append(h.logs, fmt.Sprintf("[log truncated: %d-line cap reached]", MaxLogLines)), true
	default:
		h.logs = append(h.logs, string(msg))
	}
}

// Now returns the wall clock (Capabilities.Now).
func (h *Host) Now() (time.Time, error) {
	if !h.caps.Now {
		return time.Time{}, h.deny("host.Now not granted: the role has no now capability; take the time as an argument")
	}
	h.calls.Add(1)
	return time.Now(), nil
}

// Rand returns a pseudo-random float64 in [0, 1) (Capabilities.Rand).
func (h *Host) Rand() (float64, error) {
	if !h.caps.Rand {
		return 0, h.deny("host.Rand not granted: the role has no rand capability")
	}
	h.calls.Add(1)
	return rand.Float64(), nil
}

// RandIntn returns a pseudo-random int in [0, n) (Capabilities.Rand).
func (h *Host) RandIntn(n int) (int, error) {
	if !h.caps.Rand {
		return 0, h.deny("host.Rand not granted: the role has no rand capability")
	}
	if n <= 0 {
		return 0, fmt.Errorf("host.RandIntn: n must be > 0, got %d", n)
	}
	h.calls.Add(1)
	return rand.IntN(n), nil
}

// HostAllowed reports whether host (with optional :port) matches the allowlist: exact names,
// "*.example.com" for subdomains, "host:port" to pin a port.
func HostAllowed(allow []string, u *url.URL) bool {
	hostname := strings.ToLower(u.Hostname())
	hostport := strings.ToLower(u.Host)
	for _, a := range allow {
		a = strings.ToLower(strings.TrimSpace(a))
		switch {
		case a == "":
		case a == hostport || a == hostname:
			return true
		case strings.HasPrefix(a, "*.") && strings.HasSuffix(hostname, a[1:]):
			return true
		}
	}
	return false
}

// HTTP performs req if the host is allowed (Capabilities.HTTP); any other host is a policy error.
// Non-2xx statuses come back as a response and an error carrying the status.
func (h *Host) HTTP(req HTTPRequest) (HTTPResponse, error) {
	if h.caps.HTTP == nil {
		return HTTPResponse{}, h.deny("host.HTTP not granted: the role has no http capability (request to %s)", req.URL)
	}
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return HTTPResponse{}, fmt.Errorf("host.HTTP: bad url %q: want http(s)://host/path", req.URL)
	}
	if !HostAllowed(h.caps.HTTP.Allow, u) {
		return HTTPResponse{}, h.deny("host.HTTP to %s denied: allowed hosts are %v", u.Host, h.caps.HTTP.Allow)
	}
	if len(req.Body)+len(req.URL) > MaxHostRequestBytes {
		return HTTPResponse{}, fmt.Errorf("host.HTTP: request of %d bytes is over the %d-byte cap: send less per request", len(req.Body)+len(req.URL), MaxHostRequestBytes)
	}
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = http.MethodGet
	}
	if h.replay && method != http.MethodGet && method != http.MethodHead {
		e := &Error{Kind: KindNotReplayable, Message: fmt.Sprintf("host.HTTP %s %s not sent: this run replays an input another call made, and a replay sends only GET and HEAD (a %s may act on the world again)", method, u.Host, method)}
		h.mu.Lock()
		if h.violation == nil { // the run's error, whatever the code does with this one
			h.violation = e
		}
		h.mu.Unlock()
		return HTTPResponse{}, e
	}
	timeout := h.caps.HTTP.Timeout
	if timeout <= 0 {
		timeout = DefaultHTTPTimeout
	}
	maxBytes := h.caps.HTTP.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultHTTPBytes
	}
	done := h.begin()
	defer done()
	ctx, cancel := context.WithTimeout(h.ctx, timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), strings.NewReader(req.Body))
	if err != nil {
		return HTTPResponse{}, fmt.Errorf("host.HTTP: %w", err)
	}
	for k, v := range req.Header {
		hreq.Header.Set(k, v)
	}
	transport := publicTransport
	if h.caps.HTTP.Private || namesAddress(u) {
		transport = anyTransport
	}
	client := &http.Client{Transport: transport, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if !HostAllowed(h.caps.HTTP.Allow, r.URL) {
			return h.deny("host.HTTP redirect to %s denied: allowed hosts are %v", r.URL.Host, h.caps.HTTP.Allow)
		}
		if transport == anyTransport && !h.caps.HTTP.Private && !namesAddress(r.URL) {
			return h.deny("host.HTTP redirect from %s to %s denied: a request to an address may not be redirected to a name; request %s directly", u.Host, r.URL.Host, r.URL.Host)
		}
		return nil
	}}
	resp, err := client.Do(hreq)
	if err != nil {
		if v := h.Violation(); v != nil {
			return HTTPResponse{}, v
		}
		if pe := (*privateAddrError)(nil); errors.As(err, &pe) {
			return HTTPResponse{}, h.deny("host.HTTP to %s denied: it resolves to %s, which is not a public address; "+
				"a role that must reach an internal service needs \"private\": true in capabilities.http", u.Host, pe.addr)
		}
		return HTTPResponse{}, h.fail(&Error{Kind: KindHost, Message: fmt.Sprintf("http %s %s: %v", method, u.Host, err), Err: err})
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return HTTPResponse{}, h.fail(&Error{Kind: KindHost, Message: fmt.Sprintf("http %s %s: read body: %v", method, u.Host, err), HTTPStatus: resp.StatusCode, Err: err})
	}
	if int64(len(body)) > maxBytes {
		return HTTPResponse{}, h.fail(&Error{Kind: KindHost, Message: fmt.Sprintf("http %s %s: response larger than %d bytes", method, u.Host, maxBytes), HTTPStatus: resp.StatusCode})
	}
	out := HTTPResponse{Status: resp.StatusCode, Body: string(body), Header: map[string]string{}}
	for k := range resp.Header {
		out.Header[k] = resp.Header.Get(k)
	}
	h.upstream.Store(true)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return out, h.fail(&Error{Kind: KindHost, Message: fmt.Sprintf("http %s %s: status %d", method, u.Host, resp.StatusCode), HTTPStatus: resp.StatusCode})
	}
	return out, nil
}

// Get fetches url and returns its body (see HTTP).
func (h *Host) Get(rawURL string) (string, error) {
	resp, err := h.HTTP(HTTPRequest{Method: http.MethodGet, URL: rawURL})
	return resp.Body, err
}

// Call delegates role.method to the forge (Capabilities.Call). A call at depth
// Limits.MaxCallDepth may not delegate: the refusal (KindCallDepth, naming the chain when the
// context has a Caller) fails this call even if the code recovers from it, since this code made
// the call that went over. The nested call's ctx carries the new depth, which tells the backends
// that the Run is re-entrant. Time in the nested call counts as in flight only while the chain
// is blocked on external work (see InFlight).
func (h *Host) Call(role, method string, args json.RawMessage) (json.RawMessage, error) {
	if !h.caps.Call || h.call == nil {
		return nil, h.deny("host.Call(%s, %s) not granted: the role has no call capability", role, method)
	}
	if err := CheckCallArgs(args); err != nil {
		return nil, err
	}
	depth := CallDepth(h.ctx) + 1
	if max := min(h.limits.MaxCallDepth, MaxCallDepthCeiling); depth > max {
		var chain []string
		if c := CallerOf(h.ctx); c != nil {
			chain = c.CallChain()
		}
		return nil, h.refuse(CallDepthError(chain, role, method, depth, max))
	}
	h.calls.Add(1)
	t := h.tree
	epoch := t.cut.Load()
	h.callEpoch.Store(epoch)
	h.delegating.Add(1)
	out, err := h.call(context.WithValue(WithCallDepth(h.ctx, depth), treeKey{}, t), role, method, args)
	expired := h.ctx.Err() != nil
	if dl, ok := h.ctx.Deadline(); ok && !time.Now().Before(dl) {
		expired = true // the nested call's timer, set to the same instant, may have fired first
	}
	external := expired && (!t.managed.Load() || t.external.Load() > 0 || t.cut.Load() != epoch)
	if external {
		h.cutShort.Store(true)
	}
	h.delegating.Add(-1)
	if err != nil {
		var se *Error
		if errors.As(err, &se) {
			switch se.Kind {
			case KindCallDepth:
				return nil, h.refuse(se)
			case KindPolicy:
				return nil, err
			}
		}
		if expired {
			// This call's own deadline passed during the delegation: that, not the nested
			// failure it caused, is this call's failure, whether or not the backend stops the
			// code before it returns the error (in flight only if the chain waited on the world).
			return nil, h.fail(&Error{Kind: KindDeadline, HostCallInFlight: external, Err: err,
				Message: fmt.Sprintf("deadline exceeded while the delegated call %s.%s ran", role, method)})
		}
		return nil, h.fail(&Error{Kind: KindHost, Message: fmt.Sprintf("call %s.%s: %v", role, method, err), Err: err})
	}
	h.upstream.Store(true)
	return out, nil
}

// CheckCallArgs refuses delegated args over MaxCallArgsBytes, before anything parses or splits
// them (Host.Call; backends that read a delegation request from guest memory check its size first).
func CheckCallArgs(args json.RawMessage) error {
	if len(args) > MaxCallArgsBytes {
		return fmt.Errorf("host.Call: args of %d bytes are over the %d-byte cap: delegate smaller requests", len(args), MaxCallArgsBytes)
	}
	return nil
}

// Finish merges the host's evidence into a run's outcome: a policy violation wins over everything
// (the code tried something forbidden, even if it recovered), an error after a failed host call is
// that host failure, a JSON decode error after upstream data was read is KindDecode, and every
// error learns whether upstream data had been read. out (if not nil) gets logs and counters.
func (h *Host) Finish(out *Output, err error) error {
	if out != nil {
		out.Logs = h.Logs()
		out.HostCalls = h.Calls()
		out.UpstreamRead = h.UpstreamRead()
	}
	if v := h.Violation(); v != nil {
		c := *v
		c.Message = CapMessage(c.Message)
		c.UpstreamRead = h.UpstreamRead()
		return &c
	}
	if err == nil {
		return nil
	}
	e := AsError(err)
	c := *e
	c.Message = CapMessage(c.Message)
	c.UpstreamRead = h.UpstreamRead()
	if c.Kind == KindReturned || c.Kind == KindPanic {
		h.mu.Lock()
		f := h.failure
		h.mu.Unlock()
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case f != nil:
			hf := *f
			hf.UpstreamRead = c.UpstreamRead
			if c.Message != hf.Message && c.Message != f.Error() { // the code said more than the host
				hf.Message = CapMessage(hf.Message + " (then: " + c.Message + ")")
			}
			return &hf
		case c.UpstreamRead && (errors.As(c.Err, &syn) || errors.As(c.Err, &typ) || looksLikeDecode(c.Message)):
			c.Kind = KindDecode
		}
	}
	return &c
}

func looksLikeDecode(msg string) bool {
	for _, s := range []string{"invalid character", "cannot unmarshal", "unexpected end of JSON", "parsing time", "strconv.Parse"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

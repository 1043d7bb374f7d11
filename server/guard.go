package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The guards of the HTTP edge (README, "Serving"). A page in a browser can reach a server on
// loopback two ways: under a name of its own that it points at 127.0.0.1 (DNS rebinding: the
// browser then treats the server's answers as the page's own and lets it read them), and by
// sending a request that needs no preflight (a cross-site POST with a text/plain body). So:
//
//   - the host check: the server answers only requests for its own host names (localhost,
//     127.0.0.1, [::1], and the names of Options.AllowedHosts), whatever the port;
//   - the cross-site check: a request that is not GET, HEAD or OPTIONS and that a browser marks
//     as coming from another site (Sec-Fetch-Site, or an Origin other than the Host) is refused,
//     unless its origin is one of Options.CORSOrigins;
//   - JSON only: a POST to the API (/v1/..., the operator verbs aside) and an MCP message must say
//     "Content-Type: application/json", a type no page can send to another site without a
//     preflight, which the server refuses unless CORS is on for that origin;
//   - CORS is off unless Options.CORSOrigins names origins: then those origins (and only they)
//     get the preflight answer and the Access-Control-Allow-* headers.
//
// The operator verbs need the admin token in an Authorization header, which no page can send
// to another site without a preflight either.

// loopbackHosts are the names a server answers to by default.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// guard holds the guards' configuration, built once.
type guard struct {
	err     error // Options that did not parse: every request is answered with it
	anyHost bool
	// remoteAnyHost: any host name on a connection beyond loopback (a server bound beyond
	// loopback with no names given: Serve); on a loopback connection the host check holds.
	remoteAnyHost bool
	hosts         map[string]bool        // lower-case host names without port or brackets
	hostMsg       string                 // the host names, for the refusal
	lastHost      atomic.Pointer[string] // the Host header last found allowed
	origins       map[string]bool        // CORS origins (scheme://host[:port])
	cop           *http.CrossOriginProtection
}

// newGuard checks and builds the guards. allowedHosts adds host names ("*": any host, which
// turns the host check off); corsOrigins are origins such as https://app.example.com.
func newGuard(allowedHosts, corsOrigins []string) (*guard, error) {
	g := &guard{hosts: map[string]bool{}, origins: map[string]bool{}, cop: http.NewCrossOriginProtection()}
	for _, h := range loopbackHosts {
		g.hosts[h] = true
	}
	for _, h := range allowedHosts {
		h = strings.TrimSpace(h)
		switch {
		case h == "":
			continue
		case h == "*":
			g.anyHost = true
			continue
		case strings.ContainsAny(h, "/ "):
			return nil, fmt.Errorf("allowed host %q: write a host name (api.example.com) or an address, without scheme or path", h)
		}
		g.hosts[hostName(h)] = true
	}
	names := make([]string, 0, len(g.hosts))
	for h := range g.hosts {
		names = append(names, h)
	}
	slices.Sort(names)
	g.hostMsg = strings.Join(names, ", ")
	for _, o := range corsOrigins {
		o = strings.TrimRight(strings.TrimSpace(o), "/")
		if o == "" {
			continue
		}
		if o == "*" {
			return nil, fmt.Errorf("CORS origin \"*\": name each origin that may call the server (https://app.example.com); a wildcard would let every page call it")
		}
		if err := g.cop.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("CORS origin %q: write scheme://host[:port], e.g. https://app.example.com (%v)", o, err)
		}
		g.origins[o] = true
	}
	g.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, http.StatusForbidden, "cross_site", fmt.Sprintf("a cross-site request (from %s) was refused: forge serve takes state-changing and code-running requests only from its own origin; to let a web app call it, start it with --cors-origins ORIGIN (or $FORGE_CORS_ORIGINS)", originOf(r)))
	}))
	return g, nil
}

func originOf(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" {
		return o
	}
	return "a page on another site"
}

// hostName is a Host header's or host list entry's name: lower case, without port, brackets or
// a trailing dot.
func hostName(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ".")
	return strings.ToLower(h)
}

// hostOK reports whether a Host header names one of the server's hosts. The last one seen is
// remembered, so that a run of requests for the same host parses nothing.
func (g *guard) hostOK(host string) bool {
	if p := g.lastHost.Load(); p != nil && *p == host {
		return true
	}
	if !g.hosts[hostName(host)] {
		return false
	}
	seen := host // a copy: taking host's address would move every call's host to the heap
	g.lastHost.Store(&seen)
	return true
}

// check lets a request through, or answers it (403, 415, or a CORS preflight) and returns false.
func (g *guard) check(w http.ResponseWriter, r *http.Request) bool {
	if g.err != nil {
		writeErr(w, http.StatusInternalServerError, "config", g.err.Error())
		return false
	}
	if !g.anyHost && r.Host != "" && !g.hostOK(r.Host) && !(g.remoteAnyHost && !viaLoopback(r)) {
		writeErr(w, http.StatusForbidden, "host_refused", fmt.Sprintf("this server answers only to the host names %s: a request for %q was refused (a page can point a name of its own at this address: DNS rebinding); to serve under that name, start `forge serve --allowed-hosts %s` (or $FORGE_ALLOWED_HOSTS)",
			g.hostMsg, r.Host, hostName(r.Host)))
		return false
	}
	h := r.Header // canonical keys, read directly: Get would canonicalise each key per request
	origin := first(h["Origin"])
	preflight := r.Method == http.MethodOptions && len(h["Access-Control-Request-Method"]) > 0
	if origin != "" && g.origins[origin] {
		wh := w.Header()
		wh.Set("Access-Control-Allow-Origin", origin)
		wh.Add("Vary", "Origin")
		if preflight {
			wh.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			wh.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
			wh.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return false
		}
		wh.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Retry-After, X-Forge-Class")
	} else if preflight {
		writeErr(w, http.StatusForbidden, "cross_site", fmt.Sprintf("cross-origin requests (from %s) are off: to let a web app call this server, start it with --cors-origins ORIGIN (or $FORGE_CORS_ORIGINS)", originOf(r)))
		return false
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		return true
	}
	// A request with neither header comes from no browser (CrossOriginProtection lets it pass).
	if origin != "" || len(h["Sec-Fetch-Site"]) > 0 {
		if err := g.cop.Check(r); err != nil {
			g.cop.Handler(nil).ServeHTTP(w, r) // its deny handler: the JSON refusal above
			return false
		}
	}
	if r.Method == http.MethodPost && needsJSON(r.URL.Path) && !isJSON(first(h["Content-Type"])) {
		writeErr(w, http.StatusUnsupportedMediaType, "args", fmt.Sprintf("send the body as JSON with \"Content-Type: application/json\" (got %q; e.g. curl -H 'Content-Type: application/json' -d '{\"s\":\"go\"}'): forge serve runs code only for JSON requests, which a page on another site cannot send unasked",
			r.Header.Get("Content-Type")))
		return false
	}
	return true
}

// viaLoopback reports whether r came in on a connection to a loopback address: from this
// machine, where a browser's page can point a name of its own at 127.0.0.1.
func viaLoopback(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return !ok || isLoopback(la) // unknown: as loopback (the check holds)
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// needsJSON: the POSTs that must be JSON. Every POST of the API changes state or runs code (a
// call, a role definition, a lesson recorded or confirmed, which reaches later prompts), so all of
// /v1/ does, but the operator verbs, which need the admin token in a header no page can send to
// another site unasked; and MCP.
func needsJSON(path string) bool {
	if rest, ok := strings.CutPrefix(path, "/v1/"); ok {
		return !strings.HasPrefix(rest, "admin/")
	}
	return path == "/mcp" || strings.HasPrefix(path, "/mcp/")
}

// isJSON reports whether a Content-Type is application/json (parameters such as charset aside).
func isJSON(ct string) bool {
	media, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(media), "application/json")
}

// limitListener accepts at most n connections at once: the next Accept waits until one closes
// (the kernel's backlog holds the waiting ones).
type limitListener struct {
	net.Listener
	sem       chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), closed: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// bodyDeadline cuts off a request body that has not arrived in time: the connection's read
// deadline is set when the request starts and cleared once the body has been read to its end (so
// that the call it carries may run longer, and its context is not cancelled by the deadline).
// A handler that does not read the body to its end leaves the deadline for the server's own
// read of the rest.
type bodyDeadline struct {
	body interface {
		Read([]byte) (int, error)
		Close() error
	}
	rc   *http.ResponseController
	done bool
}

func (b *bodyDeadline) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err == io.EOF && !b.done { // complete; after an error (the deadline) it stays, so the rest is not waited for
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (b *bodyDeadline) Close() error { return b.body.Close() }

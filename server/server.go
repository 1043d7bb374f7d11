// Package server is `forge serve`: a thin HTTP edge over package forge. It turns requests into
// forge calls and operator verbs and their results into JSON; every decision (how a call is
// served, what a verb does, which events a filter selects, what the statistics are) is package
// forge's. Endpoints:
//
//	POST /v1/call/{role}/{method}             body: the args (JSON); response: the Outcome
//	POST /v1/admin/regen/{role}/{method}      operator verbs, with "Authorization: Bearer TOKEN"
//	POST /v1/admin/bless/{role}/{method}      ?reset=1 starts its counters afresh
//	POST /v1/admin/quarantine/{role}/{method}
//	POST /v1/admin/lift/{role}/{method}       lift a quarantine once the gate passes the code again; the Outcome
//	POST /v1/admin/rollback/{role}/{method}   ?gen=N (default: the generation before the current)
//	POST /v1/admin/edit/{role}/{method}       body: the new Go code; through the gate
//	GET  /v1/roles, /v1/roles/{role}          contracts
//	POST /v1/roles                            body: a contract; defines a role (?dry_run=1: checks it)
//	GET  /v1/tools?format=mcp|openai|anthropic&role=   the methods as tool definitions
//	GET  /v1/artifacts, /v1/artifacts/{role}/{method}, /v1/history/{role}/{method}, /v1/stale
//	GET  /v1/stats?since=24h                  what reuse bought (forge.Stats)
//	GET  /v1/events?role=&method=&class=&source=&trace=   Server-Sent Events (forge.Filter)
//	GET  /v1/artifact-table, /v1/artifacts/{role}/{method}/activity, /v1/quarantine   the console's (console.go)
//	POST /v1/admin/restore/{id}, /v1/admin/dismiss/{id}   a damaged file the store set aside
//	GET  /ui/                                 the operator console (package server/ui)
//	GET  /metrics                             Prometheus
//	GET  /healthz, /readyz
//
// Every request passes the guards first (guard.go: the host check, the cross-site check, JSON
// only for calls and MCP, CORS only for configured origins); Serve bounds the time to send
// headers and bodies and the connections open at once. A call's status comes from its Outcome
// (callStatus, status.go); the body is always JSON.
package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// Defaults of Options.
const (
	DefaultMaxBody     = 1 << 20
	DefaultCallTimeout = 2 * time.Minute
	DefaultAddr        = "127.0.0.1:7077"
	// DefaultHeaderTimeout bounds reading a request's headers, DefaultBodyTimeout its body (from
	// the request's start): a client that trickles either is cut off.
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 20 * time.Second
	// DefaultIdleTimeout closes a kept-alive connection with no request for this long.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxConns bounds the connections open at once; more wait to be accepted.
	DefaultMaxConns = 1024
)

// Options configure a Server. The zero value is safe: no admin verbs, 1 MiB bodies, 2 min calls.
type Options struct {
	// AdminToken guards the operator verbs; empty disables them.
	AdminToken string
	// MaxBody bounds a request body (DefaultMaxBody).
	MaxBody int64
	// CallTimeout bounds one call or verb (DefaultCallTimeout).
	CallTimeout time.Duration
	// Logger gets one structured line per request (default slog.Default()).
	Logger *slog.Logger
	// RequestLog, when set, takes the per-request lines instead of Logger: the line a JSON
	// handler writes (slog.NewJSONHandler(RequestLog, nil)), formatted without slog. forge serve
	// sets it to the LogWriter under its Logger's JSON handler.
	RequestLog *LogWriter
	// Extra handlers by path (forge serve mounts the MCP streamable HTTP handler at /mcp).
	Extra map[string]http.Handler
	// Clients are the client identities (clients.go); nil: none, every caller is one client.
	Clients *Clients
	// DefineRoles are the switches of POST /v1/roles (roles_define.go); off unless Allow.
	DefineRoles forge.DefineSwitches
	// OnShutdown runs when a graceful shutdown starts, before in-flight requests are waited for:
	// it ends long-lived streams the server does not own (MCP sessions).
	OnShutdown func()

	// AllowedHosts are host names the server answers to besides localhost, 127.0.0.1 and [::1]
	// ("*": any; see guard.go). Serve on an address that is not loopback with none given answers
	// to any host name.
	AllowedHosts []string
	// CORSOrigins are the origins (https://app.example.com) whose pages may call the server;
	// none: CORS is off and cross-site requests that change state or run code are refused.
	CORSOrigins []string
	// HeaderTimeout, BodyTimeout, IdleTimeout and MaxConns bound the connections of Serve (the
	// Default* constants; a negative value turns a bound off).
	HeaderTimeout, BodyTimeout, IdleTimeout time.Duration
	MaxConns                                int
}

// Server serves one forge over HTTP.
type Server struct {
	f       *forge.Forge
	o       Options
	mux     *http.ServeMux
	metrics *Metrics
	reg     *prometheus.Registry

	guard   *guard
	jsonErr map[string]bool // paths whose mux errors (404, 405) are not rewritten as JSON: Extra's

	closing  chan struct{}
	closeMu  sync.Once
	inflight atomic.Int64
	// callRoute: POST /v1/call/{role}/{method} is routed before the mux (callPath), as no
	// Extra handler can take such a path.
	callRoute bool
}

// Validate checks the Options that can be wrong (an allowed host or CORS origin that does not
// parse), saying which and how to write it.
func (o *Options) Validate() error {
	if _, err := newGuard(o.AllowedHosts, o.CORSOrigins); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// New builds the server for f. Metrics are registered on a registry of the server's own. With
// Options that do not Validate it answers every request with the error (and Serve returns it).
func New(f *forge.Forge, o Options) *Server {
	g, gerr := newGuard(o.AllowedHosts, o.CORSOrigins)
	if gerr != nil {
		g, _ = newGuard(nil, nil)
		g.err = fmt.Errorf("server: %w", gerr)
	}
	if o.HeaderTimeout == 0 {
		o.HeaderTimeout = DefaultHeaderTimeout
	}
	if o.BodyTimeout == 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Server{f: f, o: o, mux: http.NewServeMux(), reg: prometheus.NewRegistry(), closing: make(chan struct{}), guard: g, jsonErr: map[string]bool{}}
	s.metrics = NewMetrics(s.reg, f)
	f.Observe(s.metrics.Observe)

	s.mux.HandleFunc("POST /v1/call/{role}/{method}", s.handleCall)
	s.mux.HandleFunc("POST /v1/admin/{verb}/{role}/{method}", s.admin(s.handleVerb))
	s.mux.HandleFunc("GET /v1/roles", s.handleRoles)
	s.mux.HandleFunc("GET /v1/roles/{role}", s.handleRole)
	s.mux.HandleFunc("POST /v1/roles", s.handleDefineRole) // roles_define.go
	s.mux.HandleFunc("GET /v1/tools", s.handleTools)       // tools.go
	s.mux.HandleFunc("GET /v1/artifacts", s.handleArtifacts)
	s.mux.HandleFunc("GET /v1/artifacts/{role}/{method}", s.handleArtifact)
	s.mux.HandleFunc("GET /v1/history/{role}/{method}", s.handleHistory)
	s.mux.HandleFunc("GET /v1/stale", s.handleStale)
	s.mux.HandleFunc("GET /v1/stats", s.handleStats)
	s.mux.HandleFunc("GET /v1/events", s.handleEvents)
	s.knowledgeRoutes() // knowledge.go: /v1/knowledge
	s.consoleRoutes()   // console.go: /ui and the endpoints it adds
	s.replayRoutes()    // replay.go: /v1/artifacts/{role}/{method}/replay, /diff
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, map[string]bool{"ok": true}) })
	s.mux.HandleFunc("GET /readyz", s.handleReady)
	s.callRoute = true
	for path, h := range o.Extra {
		s.mux.Handle(path, h)
		s.jsonErr[path] = true
		if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "/v1/call") {
			s.callRoute = false // a pattern with a host or a method, or one under /v1/call: the mux decides
		}
	}
	return s
}

// callPath returns the role and method of a request the mux would route to handleCall with
// those path values: a POST of /v1/call/ROLE/METHOD whose path is clean and unescaped; ok is
// false for any other request (the mux decides, cleaning or redirecting its path).
func callPath(method string, u *url.URL) (role, meth string, ok bool) {
	if method != http.MethodPost || u.RawPath != "" {
		return "", "", false
	}
	rest, found := strings.CutPrefix(u.Path, "/v1/call/")
	if !found {
		return "", "", false
	}
	role, meth, found = strings.Cut(rest, "/")
	if !found || role == "" || meth == "" || role == "." || role == ".." || meth == "." || meth == ".." || strings.IndexByte(meth, '/') >= 0 {
		return "", "", false
	}
	return role, meth, true
}

// edgeRequest is the edge's state of one request, in one allocation: the status writer, and
// the body's deadline with the response controller that sets it.
type edgeRequest struct {
	sw statusWriter
	bd bodyDeadline
	rc http.ResponseController
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s }

// Registry is the Prometheus registry of the server's metrics.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// ServeHTTP logs each request (event streams when they end) and dispatches it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	er := &edgeRequest{sw: statusWriter{ResponseWriter: w, status: 200, jsonErrors: !s.jsonErr[r.URL.Path]}}
	sw := &er.sw
	ok := s.guard.check(sw, r)
	if ok && r.Body != nil && r.Body != http.NoBody && s.o.BodyTimeout > 0 {
		er.rc = *http.NewResponseController(w)
		if er.rc.SetReadDeadline(start.Add(s.o.BodyTimeout)) == nil {
			er.bd = bodyDeadline{body: r.Body, rc: &er.rc}
			r.Body = &er.bd
		}
	}
	if ok && !sw.jsonErrors && r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(sw, r.Body, s.o.MaxBody) // Extra handlers (MCP) read bodies of their own: the same bound
	}
	if cs := s.o.Clients; ok && cs != nil {
		r, ok = cs.gate(sw, r, s.o.AdminToken) // client identities: 401, 403 or 429 here
	}
	if ok {
		if role, method, call := callPath(r.Method, r.URL); call && s.callRoute {
			s.call(sw, r, role, method) // the mux's work (and its path values' allocations) spared
		} else {
			s.mux.ServeHTTP(sw, r)
		}
	}
	if r.URL.Path == "/metrics" || r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
		return
	}
	if s.o.RequestLog != nil {
		now := time.Now() // one clock read for the line's time and the duration
		s.o.RequestLog.Request(now, r.Method, r.URL.Path, sw.status, now.Sub(start))
		return
	}
	s.o.Logger.LogAttrs(r.Context(), slog.LevelInfo, "request", requestAttrs(r.Method, r.URL.Path, sw.status, time.Since(start))...)
}

// CloseStreams makes the open event streams send what they have queued and end (before
// http.Server.Shutdown, which waits for their handlers to return).
func (s *Server) CloseStreams() {
	s.closeMu.Do(func() { close(s.closing) })
}

// statusWriter records the status; with jsonErrors it turns the mux's own plain-text answers
// (404 for no route, 405 for a route that takes another method) into the JSON error body.
type statusWriter struct {
	http.ResponseWriter
	status     int
	jsonErrors bool
	swallow    bool // the mux's plain-text body, replaced
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	if w.jsonErrors && (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) &&
		strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.swallow = true
		msg := "no such endpoint: see the endpoints of `forge serve --help` (POST /v1/call/{role}/{method}, GET /v1/roles, ...)"
		if code == http.StatusMethodNotAllowed {
			msg = "this endpoint takes " + w.Header().Get("Allow") + ", not this method (a call is POST /v1/call/{role}/{method} with the args as a JSON body)"
		}
		w.Header().Del("X-Content-Type-Options")
		writeErr(w.ResponseWriter, code, forge.TypeNotFound, msg)
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.swallow {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// apiError is the body of every error response.
type apiError struct {
	OK    bool `json:"ok"`
	Error struct {
		Type    string `json:"type"`
		Class   string `json:"class"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.Encode(v)
}

func writeErr(w http.ResponseWriter, status int, typ, msg string) {
	var e apiError
	e.Error.Type, e.Error.Class, e.Error.Message = typ, "caller", msg
	if status >= 500 {
		e.Error.Class = "extrinsic"
	}
	writeJSON(w, status, e)
}

// storeErr maps a store error to a response.
func storeErr(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, registry.ErrNotFound):
		writeErr(w, http.StatusNotFound, forge.TypeNotFound, err.Error())
	case errors.Is(err, registry.ErrInvalidName):
		writeErr(w, http.StatusBadRequest, "args", err.Error())
	default:
		writeErr(w, http.StatusInternalServerError, "store", err.Error())
	}
}

// readBody reads a request body within the limit: one of an announced length into a buffer of
// that length (net/http's body ends there), one of unknown length through a MaxBytesReader.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	var body []byte
	var err error
	if n := r.ContentLength; n >= 0 && n <= s.o.MaxBody {
		body, err = readSized(r.Body, n, s.o.MaxBody)
	} else if n > s.o.MaxBody {
		err = &http.MaxBytesError{Limit: s.o.MaxBody}
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, s.o.MaxBody))
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeErr(w, http.StatusRequestEntityTooLarge, "args", fmt.Sprintf("request body over %d bytes: send smaller args (the limit is the server's --max-body)", s.o.MaxBody))
		} else if errors.Is(err, os.ErrDeadlineExceeded) {
			writeErr(w, http.StatusRequestTimeout, "args", fmt.Sprintf("the request body did not arrive within %v of the request's start: send it at once (the limit is the server's --body-timeout)", s.o.BodyTimeout))
		} else {
			writeErr(w, http.StatusBadRequest, "args", "reading the request body: "+err.Error())
		}
		return nil, false
	}
	return body, true
}

// readSized reads body to its end into a buffer of size+1 bytes (the last for the read that finds
// the end), past max bytes failing as a MaxBytesReader does. The buffer starts at most
// sizedPrealloc long and grows as the bytes arrive: an announced length costs nothing before
// its bytes come (connections announcing --max-body and sending nothing would hold it each).
func readSized(body io.Reader, size, max int64) ([]byte, error) {
	b := make([]byte, 0, min(size, sizedPrealloc)+1)
	for {
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > max {
			return nil, &http.MaxBytesError{Limit: max}
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) { // more than announced (a request not read from a connection)
			b = append(b, 0)[:len(b)]
		}
	}
}

// sizedPrealloc is the most readSized allocates before a body's bytes arrive.
const sizedPrealloc = 64 << 10

func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	s.call(w, r, r.PathValue("role"), r.PathValue("method"))
}

// call serves POST /v1/call/{role}/{method}.
func (s *Server) call(w http.ResponseWriter, r *http.Request, role, method string) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	if !json.Valid(body) {
		writeErr(w, http.StatusBadRequest, "args", "the request body is not JSON ("+registry.JSONSyntaxWhere(body)+"): send the args as a JSON object (or array), e.g. {\"s\":\"go\"}")
		return
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	// Bounded by the call timeout; a warm call that its role's own limit bounds first makes no
	// timer of it (forge.CallWithin).
	o := s.f.CallWithin(r.Context(), s.o.CallTimeout, role, method, json.RawMessage(body))
	writeOutcome(w, &o, false)
}

// writeOutcome answers with an Outcome as the body and the status callStatus gives it (for an
// operator's edit, code that the gate refuses is the operator's input: 422, not 500).
func writeOutcome(w http.ResponseWriter, o *forge.Outcome, edit bool) {
	status, retry := callStatus(o)
	if o.Err != nil {
		w.Header().Set("X-Forge-Class", o.Err.Class)
		if edit && o.Err.Class == string(classifier.Intrinsic) {
			status = http.StatusUnprocessableEntity
		}
	}
	if retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retry))
	}
	bp := outcomeBufs.Get().(*[]byte)
	defer outcomeBufs.Put(bp)
	b, err := o.AppendJSON((*bp)[:0])
	if err != nil {
		writeErr(w, http.StatusInternalServerError, "internal", "the call's answer could not be written as JSON (a forge bug: report it): "+err.Error())
		return
	}
	b = append(b, '\n') // as json.Encoder ends a document
	*bp = b
	w.Header()["Content-Type"] = jsonType // the header's value shared, not allocated per answer
	w.WriteHeader(status)
	w.Write(b)
}

// jsonType is the Content-Type header of a JSON answer, shared by every response: net/http and
// Header's own methods never change a value's elements in place (Set replaces, Add appends to a
// slice with no spare capacity).
var jsonType = []string{"application/json"}

// outcomeBufs are the buffers Outcomes are written into (the response writer copies them).
var outcomeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// admin guards an operator verb with the admin token.
func (s *Server) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.o.AdminToken == "" {
			writeErr(w, http.StatusForbidden, forge.TypeRefused, "operator verbs are disabled: start `forge serve` with --admin-token (or $FORGE_ADMIN_TOKEN)")
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !constantTimeEqual(tok, s.o.AdminToken) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="forge"`)
			writeErr(w, http.StatusUnauthorized, forge.TypeRefused, "operator verbs need \"Authorization: Bearer TOKEN\" with the server's admin token")
			return
		}
		h(w, r)
	}
}

func constantTimeEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var v byte
	for i := 0; i < len(a); i++ {
		v |= a[i] ^ b[i]
	}
	return v == 0
}

// verbResult is the response of a verb that changes an artifact's standing.
type verbResult struct {
	OK       bool               `json:"ok"`
	Verb     string             `json:"verb"`
	Artifact *registry.Artifact `json:"artifact,omitempty"`
}

func (s *Server) handleVerb(w http.ResponseWriter, r *http.Request) {
	role, method, verb := r.PathValue("role"), r.PathValue("method"), r.PathValue("verb")
	ctx, cancel := context.WithTimeout(r.Context(), s.o.CallTimeout)
	defer cancel()
	var err error
	switch verb {
	case "regen":
		o := s.f.RegenerateWith(ctx, role, method, forge.RegenOptions{AcceptChanges: acceptChanges(r)})
		writeOutcome(w, &o, false)
		return
	case "edit":
		body, ok := s.readBody(w, r)
		if !ok {
			return
		}
		o := s.f.EditWith(ctx, role, method, string(body), forge.EditOptions{AcceptChanges: acceptChanges(r)})
		writeOutcome(w, &o, true)
		return
	case "bless":
		err = s.f.BlessContext(ctx, role, method, r.URL.Query().Get("reset") == "1")
	case "quarantine":
		err = s.f.QuarantineContext(ctx, role, method)
	case "lift":
		o := s.f.LiftQuarantineWith(ctx, role, method, forge.PromoteOptions{AcceptChanges: acceptChanges(r)})
		writeOutcome(w, &o, false)
		return
	case "rollback":
		gen := 0
		if g := r.URL.Query().Get("gen"); g != "" {
			if gen, err = strconv.Atoi(strings.TrimPrefix(g, "gen-")); err != nil {
				writeErr(w, http.StatusBadRequest, "args", fmt.Sprintf("gen=%q is not a generation number", g))
				return
			}
		}
		_, err = s.f.RollbackWith(ctx, role, method, gen, forge.PromoteOptions{AcceptChanges: acceptChanges(r)})
	default:
		writeErr(w, http.StatusNotFound, "args", fmt.Sprintf("unknown verb %q: use regen, bless, quarantine, lift, rollback or edit", verb))
		return
	}
	if err != nil {
		if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrInvalidName) {
			storeErr(w, err)
		} else {
			writeErr(w, http.StatusConflict, forge.TypeRefused, err.Error())
		}
		return
	}
	a, err := s.f.Store().Load(role, method)
	if err != nil {
		storeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, verbResult{OK: true, Verb: verb, Artifact: a})
}

func (s *Server) handleRoles(w http.ResponseWriter, _ *http.Request) {
	roles, err := s.f.Store().Roles()
	if err != nil {
		storeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, roles)
}

func (s *Server) handleRole(w http.ResponseWriter, r *http.Request) {
	rec, err := s.f.Store().Role(r.PathValue("role"))
	if err != nil {
		storeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

// artifactRow is an artifact without its code and history, for listings.
type artifactRow struct {
	Role          string `json:"role"`
	Method        string `json:"method"`
	Lifecycle     string `json:"lifecycle,omitempty"`
	Generation    int    `json:"generation,omitempty"`
	Trigger       string `json:"trigger,omitempty"`
	SuccessCount  int64  `json:"success_count"`
	FailureCount  int64  `json:"failure_count"`
	Error         string `json:"error,omitempty"`
	ContractMatch bool   `json:"contract_current"`
}

// handleArtifacts lists the artifacts from the store's listing (forge.List).
func (s *Server) handleArtifacts(w http.ResponseWriter, _ *http.Request) {
	sums, err := forge.List(s.f.Store())
	if err != nil {
		storeErr(w, err)
		return
	}
	rows := make([]artifactRow, 0, len(sums))
	for i := range sums {
		sm := &sums[i]
		row := artifactRow{Role: sm.Role, Method: sm.Method}
		if sm.Err != nil {
			row.Error = sm.Err.Error()
			rows = append(rows, row)
			continue
		}
		row.Lifecycle, row.Generation, row.Trigger = string(sm.Lifecycle), sm.Generation, sm.Trigger
		row.SuccessCount, row.FailureCount = sm.SuccessCount, sm.FailureCount
		row.ContractMatch = sm.ContractCurrent()
		rows = append(rows, row)
	}
	writeJSON(w, http.StatusOK, rows)
}

func (s *Server) handleArtifact(w http.ResponseWriter, r *http.Request) {
	a, err := forge.LoadArtifact(s.f.Store(), r.PathValue("role"), r.PathValue("method")) // a missing one says why
	if err != nil {
		storeErr(w, err)
		return
	}
	if !s.operator(r) {
		a = forge.ArtifactFor(r.Context(), a) // other clients' inputs (sampled, echoed by a failure) are theirs
	}
	writeJSON(w, http.StatusOK, a)
}

// operator reports whether r carries the admin token.
func (s *Server) operator(r *http.Request) bool {
	return s.o.AdminToken != "" && subtle.ConstantTimeCompare([]byte(bearer(r)), []byte(s.o.AdminToken)) == 1
}

func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	a, err := forge.LoadArtifact(s.f.Store(), r.PathValue("role"), r.PathValue("method")) // a missing one says why
	if err != nil {
		storeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a.History)
}

func (s *Server) handleStale(w http.ResponseWriter, _ *http.Request) {
	rows, err := forge.Stale(s.f.Store())
	if err != nil {
		storeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rows)
}

func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		d, err := forge.ParseAge(v)
		if err != nil {
			writeErr(w, http.StatusBadRequest, "args", "since="+err.Error())
			return
		}
		since = time.Now().Add(-d)
	}
	st, err := s.f.Stats(since)
	if err != nil {
		storeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// ParseFilter reads a forge.Filter from query parameters (role, method, class, source, trace).
func ParseFilter(q interface{ Get(string) string }) (forge.Filter, error) {
	fl := forge.Filter{Role: q.Get("role"), Method: q.Get("method"), Class: q.Get("class"), Source: q.Get("source")}
	if t := q.Get("trace"); t != "" {
		if err := fl.Trace.UnmarshalText([]byte(t)); err != nil {
			return fl, fmt.Errorf("trace=%q is not a trace id (16 hex digits)", t)
		}
	}
	return fl, nil
}

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	fl, err := ParseFilter(r.URL.Query())
	if err != nil {
		writeErr(w, http.StatusBadRequest, "args", err.Error())
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeErr(w, http.StatusInternalServerError, "internal", "this connection cannot stream")
		return
	}
	if !s.operator(r) {
		fl.Viewer = forge.ClientFrom(r.Context()) // another client's failure text is its own
	}
	sub := s.f.Subscribe(fl)
	defer sub.Close()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": forge events\n\n")
	flusher.Flush()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	var buf []byte
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			// Shutdown: send what is queued, then end the stream.
			for {
				select {
				case e, ok := <-sub.C:
					if !ok {
						flusher.Flush()
						return
					}
					buf = appendSSE(buf[:0], &e)
					w.Write(buf)
				default:
					flusher.Flush()
					return
				}
			}
		case <-keepAlive.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			flusher.Flush()
		case e, ok := <-sub.C:
			if !ok {
				return
			}
			buf = appendSSE(buf[:0], &e)
			for n := len(sub.C); n > 0; n-- { // batch what is already queued into one flush
				e = <-sub.C
				buf = appendSSE(buf, &e)
			}
			if _, err := w.Write(buf); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

func appendSSE(buf []byte, e *forge.LiveEvent) []byte {
	data, _ := json.Marshal(e)
	buf = append(buf, "event: "...)
	buf = append(buf, e.Kind...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	return append(buf, "\n\n"...)
}

func (s *Server) handleReady(w http.ResponseWriter, _ *http.Request) {
	select {
	case <-s.closing:
		writeErr(w, http.StatusServiceUnavailable, "shutdown", "the server is shutting down")
		return
	default:
	}
	if _, err := s.f.Store().List(); err != nil {
		writeErr(w, http.StatusServiceUnavailable, "store", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// isLoopback reports whether a listener's address is a loopback one.
func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// ShutdownTimeout bounds how long Serve waits for in-flight calls after its context ends.
const ShutdownTimeout = 30 * time.Second

// Serve serves on ln until ctx ends (SIGTERM in `forge serve`), then shuts down gracefully: it
// stops accepting, ends the event streams after sending what they had queued, and waits for
// in-flight calls to finish and their responses to be written. Every call that was answered has
// been counted in the metrics and queued for the event log; the caller then closes the forge,
// which writes the queued events.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.guard.err != nil {
		return s.guard.err
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: max(s.o.HeaderTimeout, 0), IdleTimeout: max(s.o.IdleTimeout, 0),
		ErrorLog: slog.NewLogLogger(s.o.Logger.Handler(), slog.LevelWarn)}
	if s.o.MaxConns > 0 {
		ln = newLimitListener(ln, s.o.MaxConns)
	}
	if len(s.o.AllowedHosts) == 0 && !isLoopback(ln.Addr()) {
		// Bound beyond loopback with no names given: the names it is reached by from elsewhere are
		// unknown; on a loopback connection they are loopback's (a page on this machine that points
		// a name of its own at 127.0.0.1 is refused: DNS rebinding).
		s.guard.remoteAnyHost = true
		s.o.Logger.Warn("serving beyond loopback: the host check is off but for connections to loopback (name the host names with --allowed-hosts to turn it on)", slog.String("addr", ln.Addr().String()))
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.o.Logger.Info("shutting down: finishing in-flight calls", slog.Int64("in_flight", s.inflight.Load()))
	s.CloseStreams()
	if s.o.OnShutdown != nil {
		s.o.OnShutdown()
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("server: shutdown: %w (calls still running after %v were cut off)", err, ShutdownTimeout)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/artifactforge/forge/forge"
)

// The tools/call fast path of streamable HTTP. The SDK (v1.8.0) decodes every message four
// times on the way in (the batch, the message, the params, their _meta), each with a fresh,
// zeroed 32 KiB buffer (segmentio/encoding's Decoder), then hands it through the session's
// goroutines and writes the answer as an SSE event: for a warm call of a few microseconds that is
// most of /mcp's cost. httpEdge answers the plainest tools/call itself — one request, on a session
// the SDK opened and still holds, calling forge_call or a method tool, with no _meta (so no
// progress token: nothing is sent to the client but the answer) — by calling the same tool
// handler the SDK would with the same request, and writes the same JSON-RPC response as a plain
// JSON body (the answer streamable HTTP allows to any POST, the SDK's JSONResponse mode).
// Anything else goes to the SDK untouched (fastCall decides, and falls back for whatever it does
// not recognize exactly), so the SDK stays the reference for every error. The two paths share
// one table of the request IDs in flight on a session (fastSession.inflight), so that an ID is
// refused on either while the other answers it, as the SDK refuses its own.

// fastBodyMax is the largest body the fast path reads; a larger one goes to the SDK.
const fastBodyMax = 64 << 10

// fastVersions are the Mcp-Protocol-Version headers whose tools/call the fast path answers: the
// SDK's stateful versions, and none (the SDK takes it for 2025-03-26); later versions go through
// the SDK's checks of per-request _meta and headers.
var fastVersions = map[string]bool{"": true, "2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// httpEdge is the streamable HTTP handler: the SDK's, with the tools/call fast path in front.
type httpEdge struct {
	s     *Server
	sdk   http.Handler
	tools func(name string) toolHandler // the handlers it calls: Server.fastTool

	mu       sync.Mutex
	sessions map[string]*fastSession // by Mcp-Session-Id: the sessions this handler's SDK opened, while they live
	uses     atomic.Uint64           // the clock of fastSession.used
}

// fastSession is a session the fast path may answer on.
type fastSession struct {
	ss     *sdk.ServerSession
	userID string        // the client that opened it (the SDK refuses the session to any other)
	epoch  uint64        // Server.sessionEpoch when it was opened: CloseSessions ended it if that moved on
	used   atomic.Uint64 // httpEdge.uses at its latest request: past Options.MaxSessions the least recent ends

	mu sync.Mutex
	// inflight holds the request IDs in flight on the session, by the ID as the answer writes it:
	// the fast path's calls with their cancel, and the SDK's with none (sdkCall). JSON-RPC forbids
	// reusing an ID in flight; each path refuses an ID the other holds, as the SDK refuses its own.
	inflight map[string]context.CancelFunc
}

// newHTTPEdge mounts the SDK's handler with no SessionTimeout: the SDK's idle timer, which the
// fast path's calls would not reset, never runs (a session ends with DELETE, CloseSessions or the
// server). Setting one needs the fast path to count as the session's activity.
func newHTTPEdge(s *Server) *httpEdge {
	return &httpEdge{s: s, tools: s.fastTool, sessions: map[string]*fastSession{},
		sdk: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv }, nil)}
}

func (h *httpEdge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	switch {
	case r.Method == http.MethodDelete && sid != "": // the session ends now, not when its goroutines have
		sw := &statusWriter{ResponseWriter: w}
		h.sdk.ServeHTTP(sw, r)
		if sw.code == http.StatusNoContent {
			h.forget(sid)
		}
	case r.Method != http.MethodPost:
		h.touch(sid)
		h.sdk.ServeHTTP(w, r)
	case sid == "": // an initialize: the SDK opens the session, its id comes back in the answer's header
		if refuseBatch(w, r) {
			return
		}
		iw := &initWriter{ResponseWriter: w, h: h, r: r}
		h.sdk.ServeHTTP(iw, r)
		iw.learn()
	default:
		h.mu.Lock()
		fs := h.sessions[sid]
		h.mu.Unlock()
		if fs != nil {
			fs.used.Store(h.uses.Add(1))
		}
		// The fast path takes one message; what it leaves goes to the SDK, but for a batch.
		switch {
		case fs == nil || fs.epoch != h.s.sessionEpoch.Load():
			if !refuseBatch(w, r) {
				h.sdk.ServeHTTP(w, r)
			}
		case !h.fastCall(w, r, fs):
			h.sdkCall(w, r, fs)
		}
	}
}

// refuseBatch answers a POST whose body is a JSON array (a JSON-RPC batch) with 400, as the SDK
// answers one from protocol version 2025-06-18 on, and reports true; otherwise it gives back what
// it read and reports false. The SDK takes a batch for 2025-03-26 (and for a request that names no
// version) and serves its calls at once: one request, counted once against its client's rate
// (server.Clients), would run as many calls as its body holds.
func refuseBatch(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return false
	}
	var head []byte
	for len(bytes.TrimLeft(head, " \t\r\n")) == 0 { // up to the first byte that is not space
		if cap(head)-len(head) < 64 {
			head = slices.Grow(head, 512)
		}
		n, err := r.Body.Read(head[len(head):cap(head)])
		head = head[:len(head)+n]
		if err != nil {
			break
		}
	}
	rest := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), rest), rest}
	if !isBatch(head) {
		return false
	}
	http.Error(w, batchRefusal, http.StatusBadRequest)
	return true
}

const batchRefusal = "Bad Request: JSON-RPC batches are not taken by this server, whatever the protocol version: send one message per request"

// isBatch: body (read whole) is a JSON array, a JSON-RPC batch (refuseBatch, for a body in hand).
func isBatch(body []byte) bool {
	body = bytes.TrimLeft(body, " \t\r\n")
	return len(body) > 0 && body[0] == '['
}

// statusWriter records the status of an answer with no body to stream.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// touch records a request on session sid (if the edge knows it) as its latest use.
func (h *httpEdge) touch(sid string) {
	if sid == "" {
		return
	}
	h.mu.Lock()
	fs := h.sessions[sid]
	h.mu.Unlock()
	if fs != nil {
		fs.used.Store(h.uses.Add(1))
	}
}

func (h *httpEdge) forget(sid string) {
	h.mu.Lock()
	delete(h.sessions, sid)
	h.mu.Unlock()
}

// initWriter learns the session an initialize opens before its answer leaves (so that the
// client's next request finds it).
type initWriter struct {
	http.ResponseWriter
	h       *httpEdge
	r       *http.Request
	learned bool
}

func (w *initWriter) learn() {
	if !w.learned {
		w.learned = w.h.learn(w.Header().Get("Mcp-Session-Id"), w.r)
	}
}

func (w *initWriter) Write(b []byte) (int, error) {
	w.learn()
	return w.ResponseWriter.Write(b)
}

func (w *initWriter) Flush() {
	w.learn()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *initWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// learn records the session sid the SDK opened, once its initialization succeeded, and forgets it
// when it ends; it reports whether sid is known now.
func (h *httpEdge) learn(sid string, r *http.Request) bool {
	if sid == "" {
		return false
	}
	var ss *sdk.ServerSession
	for s := range h.s.srv.Sessions() {
		if s.ID() == sid {
			ss = s
		}
	}
	if ss == nil || ss.InitializeParams() == nil {
		return false
	}
	fs := &fastSession{ss: ss, epoch: h.s.sessionEpoch.Load(), inflight: map[string]context.CancelFunc{}}
	fs.used.Store(h.uses.Add(1))
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		fs.userID = ti.UserID
	}
	h.mu.Lock()
	h.sessions[sid] = fs
	var oldest *fastSession
	if max := h.s.o.MaxSessions; max >= 0 && len(h.sessions) > cmp.Or(max, DefaultMaxSessions) {
		oldID := ""
		for id, o := range h.sessions { // the bound is small: a scan per initialize past it
			if o != fs && (oldest == nil || o.used.Load() < oldest.used.Load()) {
				oldest, oldID = o, id
			}
		}
		delete(h.sessions, oldID)
	}
	h.mu.Unlock()
	if oldest != nil {
		oldest.ss.Close() // past the bound: the least recently used ends (the SDK forgets it)
	}
	go func() {
		_ = ss.Wait()
		h.forget(sid)
	}()
	return true
}

// fastRequest is what the fast path knows how to answer: one tools/call.
type fastRequest struct {
	id   string // the request ID as the response writes it
	raw  any    // and as its value (a string or an int64)
	name string
	args json.RawMessage
}

// parseFastCall returns body as a tools/call the fast path answers, and false for any other body
// (invalid JSON, a batch, a notification, another method, unknown, repeated or escaped keys,
// _meta, an ID that is neither a string nor an integer): those go to the SDK. Keys are matched
// exactly, as the SDK does. body is checked whole first (json.Valid), so the members are read
// by skipping values, without decoding the document.
func parseFastCall(body []byte) (fastRequest, bool) {
	if !json.Valid(body) {
		return fastRequest{}, false
	}
	msg, ok := members(body, "jsonrpc", "id", "method", "params")
	if !ok || string(msg[0]) != `"2.0"` || string(msg[2]) != `"tools/call"` || msg[1] == nil || msg[3] == nil {
		return fastRequest{}, false
	}
	id, raw, ok := canonicalID(msg[1])
	if !ok {
		return fastRequest{}, false
	}
	params, ok := members(msg[3], "name", "arguments")
	if !ok || len(params[0]) < 2 || params[0][0] != '"' || (params[1] != nil && params[1][0] != '{') {
		return fastRequest{}, false
	}
	req := fastRequest{id: id, raw: raw, args: params[1]}
	if json.Unmarshal(params[0], &req.name) != nil {
		return fastRequest{}, false
	}
	return req, req.name != ""
}

// members returns the values of obj's members named keys (nil for an absent one), and false if
// obj is not an object or has another member, a repeated one or a key with an escape. obj must be
// valid JSON.
func members(obj []byte, keys ...string) ([][]byte, bool) {
	vals := make([][]byte, len(keys))
	ok := eachMember(obj, func(key, val []byte) bool {
		k := slices.Index(keys, string(key))
		if k < 0 || vals[k] != nil {
			return false
		}
		vals[k] = val
		return true
	})
	if !ok {
		return nil, false
	}
	return vals, true
}

// eachMember calls fn with the key and value of each member of the object obj, in order, and
// reports false if obj is not an object, a key has an escape, or fn returned false. obj must be
// valid JSON.
func eachMember(obj []byte, fn func(key, val []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for i < len(obj) && obj[i] == '"' {
		end := i + 1
		for end < len(obj) && obj[end] != '"' && obj[end] != '\\' {
			end++
		}
		if end >= len(obj) || obj[end] != '"' {
			return false
		}
		key := obj[i+1 : end]
		i = skipSpace(obj, end+1) + 1 // past the ':'
		i = skipSpace(obj, i)
		vend := skipValue(obj, i)
		if !fn(key, obj[i:vend]) {
			return false
		}
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
			continue
		}
		return i < len(obj) && obj[i] == '}'
	}
	return false
}

// skipSpace returns the offset of the first byte at or after i that is not JSON white space.
func skipSpace(b []byte, i int) int { return len(b) - len(bytes.TrimLeft(b[i:], " \t\n\r")) }

// skipValue returns the end of the (valid) JSON value at b[i:].
func skipValue(b []byte, i int) int {
	depth, inString := 0, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
				if depth == 0 {
					return i + 1
				}
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 { // the end of the enclosing object: a literal or number ended here
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return i
		}
	}
	return i
}

// parseCancelled returns the request ID a notifications/cancelled body names (read as
// parseFastCall reads a call), and false for any other body.
func parseCancelled(body []byte) (string, bool) {
	if !json.Valid(body) {
		return "", false
	}
	msg, ok := members(body, "jsonrpc", "method", "params")
	if !ok || string(msg[0]) != `"2.0"` || string(msg[1]) != `"notifications/cancelled"` || msg[2] == nil {
		return "", false
	}
	params, ok := members(msg[2], "requestId", "reason")
	if !ok || params[0] == nil {
		return "", false
	}
	id, _, ok := canonicalID(params[0])
	return id, ok
}

// canonicalID is a JSON-RPC request ID as the SDK writes it back, and its value: a string
// (written as the SDK writes it: no HTML escapes), or an integer the SDK keeps exactly (it reads
// IDs through float64: one beyond ±2^53 comes back another number, so the SDK answers those).
func canonicalID(raw json.RawMessage) (string, any, bool) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", nil, false
		}
		return sdkString(s), s, true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > maxExactID || n < -maxExactID {
		return "", nil, false
	}
	return strconv.FormatInt(n, 10), n, true
}

// maxExactID is the largest integer a float64 holds exactly (2^53).
const maxExactID = 1 << 53

// sdkString is s as a JSON string the way the SDK's messages write it (no HTML escapes).
func sdkString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// fastCall answers r on fs and reports true, or reports false, having read nothing it does not
// give back, for the SDK to answer.
func (h *httpEdge) fastCall(w http.ResponseWriter, r *http.Request, fs *fastSession) bool {
	if !fastHeaders(r, fs) {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, fastBodyMax+1))
	giveBack := func() bool { // what was read, for the SDK
		giveBackBody(r, body, err == nil && len(body) <= fastBodyMax)
		return false
	}
	if err != nil || len(body) > fastBodyMax {
		return giveBack()
	}
	req, ok := parseFastCall(body)
	if !ok {
		if id, ok := parseCancelled(body); ok { // the SDK does not know the fast path's calls
			fs.mu.Lock()
			if cancel := fs.inflight[id]; cancel != nil {
				cancel()
			}
			fs.mu.Unlock()
		}
		return giveBack()
	}
	handler := h.tools(req.name)
	if handler == nil {
		return giveBack()
	}
	// As on the SDK's path, the call ends with its own deadlines or the client's
	// notifications/cancelled, not when the client goes away or the session ends.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	fs.mu.Lock()
	_, dup := fs.inflight[req.id]
	if !dup {
		fs.inflight[req.id] = cancel
	}
	fs.mu.Unlock()
	if dup { // the SDK's answer to an ID already in flight on the session
		writeJSONRPC(w, http.StatusBadRequest, rpcError(req.id, -32600, fmt.Sprintf("duplicate in-flight request ID %v", req.raw)))
		return true
	}
	defer func() {
		fs.mu.Lock()
		delete(fs.inflight, req.id)
		fs.mu.Unlock()
	}()
	res := handler(ctx, &sdk.CallToolRequest{Session: fs.ss,
		Params: &sdk.CallToolParamsRaw{Name: req.name, Arguments: req.args},
		Extra:  &sdk.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header}})
	b := append(append(make([]byte, 0, 512), `{"jsonrpc":"2.0","id":`...), req.id...)
	b = append(b, `,"result":`...)
	b, ok = appendToolResult(b, res)
	if !ok {
		rb, err := json.Marshal(res)
		if err != nil {
			writeJSONRPC(w, http.StatusOK, rpcError(req.id, -32603, err.Error()))
			return true
		}
		b = append(b, rb...)
	}
	writeJSONRPC(w, http.StatusOK, append(b, '}'))
	return true
}

// givenBack is a request body with what was read of it put back in front of the rest.
type givenBack struct {
	io.Reader
	io.Closer
	read  []byte
	whole bool // read is the whole body
}

// giveBackBody puts what was read of r's body back in front of the rest.
func giveBackBody(r *http.Request, read []byte, whole bool) {
	rest := r.Body
	r.Body = &givenBack{io.MultiReader(bytes.NewReader(read), rest), rest, read, whole}
}

// sdkCall hands r, a POST on fs the fast path did not take, to the SDK, holding the IDs of the
// calls it carries in fs.inflight until the SDK answers them (released as each answer is written,
// before its bytes leave, so that a client reusing an ID once answered is never refused). A body
// that is not JSON-RPC, or larger than the SDK reads, goes as it is: the SDK refuses it.
func (h *httpEdge) sdkCall(w http.ResponseWriter, r *http.Request, fs *fastSession) {
	var body []byte
	var err error
	if gb, ok := r.Body.(*givenBack); ok && gb.whole { // the fast path read it all
		body = gb.read
	} else {
		body, err = io.ReadAll(io.LimitReader(r.Body, sdk.DefaultMaxRequestBodyBytes+1))
		giveBackBody(r, body, false)
	}
	if err == nil && isBatch(body) {
		http.Error(w, batchRefusal, http.StatusBadRequest)
		return
	}
	var ids []string
	if err == nil && len(body) <= sdk.DefaultMaxRequestBodyBytes && sessionsClient(r, fs) {
		ids = messageIDs(body, true)
	}
	if len(ids) == 0 {
		h.sdk.ServeHTTP(w, r)
		return
	}
	fs.mu.Lock()
	for _, id := range ids {
		if _, dup := fs.inflight[id]; dup {
			fs.mu.Unlock()
			writeJSONRPC(w, http.StatusBadRequest, rpcError(id, -32600, "duplicate in-flight request ID "+idText(id)))
			return
		}
	}
	for _, id := range ids {
		fs.inflight[id] = nil
	}
	fs.mu.Unlock()
	rw := &releaseWriter{ResponseWriter: w, fs: fs, held: ids}
	defer rw.release(func(string) bool { return true }) // what the SDK did not answer here (the client went away)
	h.sdk.ServeHTTP(rw, r)
}

// idText is an ID (as messageIDs keys it) as the SDK's error message prints it (%v of its value).
func idText(id string) string {
	var s string
	if json.Unmarshal([]byte(id), &s) == nil {
		return s
	}
	return id
}

// messageIDs returns the request IDs of body's calls (calls: messages with a method and an ID) or
// of its responses (!calls: messages with an ID and no method), one message or a batch, each as
// the SDK writes it back (sdkID). Keys match exactly, as the SDK's decoder does; a message with
// an escaped key, and a body that is not JSON, give none (the SDK answers them as it would).
func messageIDs(body []byte, calls bool) []string {
	if !json.Valid(body) {
		return nil
	}
	var ids []string
	add := func(m []byte) {
		var raw []byte
		method := false
		if !eachMember(m, func(key, val []byte) bool {
			switch string(key) {
			case "id":
				raw = val
			case "method":
				method = true
			}
			return true
		}) || raw == nil || method != calls {
			return
		}
		if id, ok := sdkID(raw); ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '[' {
		add(body)
		return ids
	}
	for i = skipSpace(body, i+1); i < len(body) && body[i] != ']'; {
		end := skipValue(body, i)
		add(body[i:end])
		i = skipSpace(body, end)
		if i < len(body) && body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
	return ids
}

// sdkID is the JSON-RPC ID raw as the SDK keys and writes it back: a string without HTML escapes,
// or a number as the integer the SDK makes of it (it reads numbers as float64 and truncates).
func sdkID(raw []byte) (string, bool) {
	if raw[0] == '"' {
		id, _, ok := canonicalID(raw)
		return id, ok
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return "", false
	}
	return strconv.FormatInt(int64(f), 10), true
}

// releaseWriter is the SDK's writer for a POST whose call IDs sdkCall holds: each answer the SDK
// writes (an event of its stream, or a JSON body) releases its ID before it is sent.
type releaseWriter struct {
	http.ResponseWriter
	fs   *fastSession
	held []string // not yet answered
}

func (w *releaseWriter) Write(b []byte) (int, error) {
	if len(w.held) > 0 {
		var answered []string
		if bytes.HasPrefix(b, []byte("{")) || bytes.HasPrefix(b, []byte("[")) {
			answered = messageIDs(b, false)
		}
		for line := range bytes.Lines(b) {
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				answered = append(answered, messageIDs(data, false)...)
			}
		}
		if len(answered) > 0 {
			w.release(func(id string) bool { return slices.Contains(answered, id) })
		}
	}
	return w.ResponseWriter.Write(b)
}

// release gives back the held IDs that answered reports.
func (w *releaseWriter) release(answered func(id string) bool) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	kept := w.held[:0]
	for _, id := range w.held {
		if answered(id) {
			delete(w.fs.inflight, id)
		} else {
			kept = append(kept, id)
		}
	}
	w.held = kept
}

func (w *releaseWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *releaseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// rpcError is the JSON-RPC error response to id.
func rpcError(id string, code int, message string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":` + strconv.Itoa(code) + `,"message":` + sdkString(message) + `}}`)
}

// appendToolResult appends r as the SDK's json.Marshal writes it, for the results outcomeResult
// makes (one text content, the Outcome as structured content, nothing else: the Outcome written
// by its AppendJSON, encoding/json's document without its reflection), and reports false for any
// other result (json.Marshal writes those).
func appendToolResult(b []byte, r *sdk.CallToolResult) ([]byte, bool) {
	if r.Meta != nil || len(r.Content) != 1 || r.InputRequests != nil || r.RequestState != "" {
		return b, false
	}
	tc, ok := r.Content[0].(*sdk.TextContent)
	o, isOutcome := r.StructuredContent.(forge.Outcome)
	if !ok || tc.Meta != nil || tc.Annotations != nil || !isOutcome {
		return b, false
	}
	text, err := json.Marshal(tc.Text)
	if err != nil {
		return b, false
	}
	n := len(b)
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = append(b, text...)
	b = append(b, `}],"structuredContent":`...)
	if b, err = o.AppendJSON(b); err != nil {
		return b[:n], false
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), true
}

// fastHeaders reports whether r's headers are those of a request the SDK would take on fs with
// no other check than the ones fastCall makes: POST of JSON accepting JSON and SSE, a protocol
// version of fastVersions, no resumption or standard MCP headers, the Host of a loopback server
// a loopback name (the SDK's DNS rebinding protection), and the session's own client.
func fastHeaders(r *http.Request, fs *fastSession) bool {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" { // the SDK's parse, for any other spelling
		if ct, _, err := mime.ParseMediaType(ct); err != nil || ct != "application/json" {
			return false
		}
	}
	if !fastVersions[r.Header.Get("Mcp-Protocol-Version")] || !acceptsJSONAndSSE(r.Header.Values("Accept")) {
		return false
	}
	for k := range r.Header {
		if k == "Last-Event-Id" || k == "Mcp-Method" || k == "Mcp-Name" || strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	return sessionsClient(r, fs)
}

// sessionsClient reports whether r passes the SDK's checks of who sends it: the Host of a
// loopback server a loopback name (its DNS rebinding protection), and the session's own client.
// Nothing about a session is answered to a request that fails them but by the SDK.
func sessionsClient(r *http.Request, fs *fastSession) bool {
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil && isLoopback(la.String()) && !isLoopback(r.Host) {
		return false
	}
	if fs.userID != "" {
		if ti := auth.TokenInfoFromContext(r.Context()); ti == nil || ti.UserID != fs.userID {
			return false
		}
	}
	return true
}

// acceptsJSONAndSSE is the SDK's check of a POST's Accept: both application/json and
// text/event-stream (or their wildcards).
func acceptsJSONAndSSE(values []string) bool {
	jsonOK, streamOK := false, false
	for _, v := range values {
		for _, raw := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// isLoopback is the SDK's: addr (host or host:port) is localhost or a loopback IP.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// writeJSONRPC writes the JSON-RPC response msg, as the SDK's JSON response does.
func writeJSONRPC(w http.ResponseWriter, status int, msg []byte) {
	h := w.Header()
	h["Cache-Control"], h["Content-Type"] = noCache, jsonType
	w.WriteHeader(status)
	_, _ = w.Write(msg)
}

// The fast path's response headers (never changed).
var noCache, jsonType = []string{"no-cache, no-transform"}, []string{"application/json"}

// toolHandler is a tool's handler as the fast path calls it.
type toolHandler func(context.Context, *sdk.CallToolRequest) *sdk.CallToolResult

// fastTool is the handler of tool name the fast path may call (forge_call or a method tool), or
// nil.
func (s *Server) fastTool(name string) toolHandler {
	if name == "forge_call" {
		return s.forgeCall
	}
	s.mu.Lock()
	ts, ok := s.methods[name]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	return func(ctx context.Context, req *sdk.CallToolRequest) *sdk.CallToolResult {
		return s.callMethod(ctx, req, ts.key.Role, ts.key.Method, req.Params.Arguments)
	}
}

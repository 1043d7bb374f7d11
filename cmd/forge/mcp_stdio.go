package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/artifactforge/forge/registry"
)

// mcpStdio sits between stdin/stdout and the MCP SDK's line transport and fixes two things a
// hand-written or scripted exchange (`forge mcp < requests.jsonl`) ran into:
//
//   - End of input ended the session at once: the SDK closes the connection on EOF and drops the
//     answers still being computed, so a file of requests got the first answer only. Here EOF is
//     held back until every request read has been answered (or the session is stopped).
//   - A line that is not JSON ended the session (the SDK's stream decoder cannot resynchronize)
//     with exit 1 and the decoder's message. Here such a line gets the JSON-RPC parse error
//     (-32700, id null) on stdout, a note on stderr, and the session goes on.
//
// Lines are bounded like the SDK's own frames (sdk.DefaultMaxLineLength).
type mcpStdio struct {
	in     *bufio.Reader
	out    io.Writer
	errOut io.Writer
	stop   <-chan struct{} // closed when the session is told to end (SIGINT, SIGTERM)

	buf bytes.Buffer // the current line, being handed to the SDK

	mu      sync.Mutex
	pending map[string]bool // ids of requests read and not yet answered
	drained chan struct{}   // closed (and replaced) when pending becomes empty
	line    int
}

func newMCPStdio(in io.Reader, out, errOut io.Writer, stop <-chan struct{}) *mcpStdio {
	return &mcpStdio{in: bufio.NewReaderSize(in, 64<<10), out: out, errOut: errOut, stop: stop,
		pending: map[string]bool{}, drained: make(chan struct{})}
}

// transport is the SDK transport reading and writing through m.
func (m *mcpStdio) transport() sdk.Transport {
	return &sdk.IOTransport{Reader: io.NopCloser(readerFunc(m.read)), Writer: nopWriteCloser{writerFunc(m.write)}}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// idKey is a request or response id as a map key: numbers and strings kept apart, 3 and 3.0 one.
func idKey(raw json.RawMessage) (string, bool) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch id := v.(type) {
	case float64:
		// The SDK answers a number id as an integer (1.5 is answered as 1).
		return "n:" + strconv.FormatInt(int64(id), 10), true
	case string:
		return "s:" + id, true
	}
	return "", false
}

// messages returns the objects of one JSON-RPC frame (a message or a batch).
func messages(frame []byte) []map[string]json.RawMessage {
	var one map[string]json.RawMessage
	if json.Unmarshal(frame, &one) == nil {
		return []map[string]json.RawMessage{one}
	}
	var batch []map[string]json.RawMessage
	_ = json.Unmarshal(frame, &batch)
	return batch
}

func (m *mcpStdio) read(p []byte) (int, error) {
	for m.buf.Len() == 0 {
		line, err := m.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				m.waitDrained()
			}
			return 0, err
		}
		m.line++
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			continue
		}
		if !json.Valid(trimmed) {
			where, _ := registry.JSONSyntaxPos(trimmed)
			fmt.Fprintf(m.errOut, "forge: mcp: input line %d is not JSON (%s); answered with a parse error, the session goes on: send one JSON-RPC message per line\n", m.line, where)
			m.write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: line ` + strconv.Itoa(m.line) + ` is not JSON (` + where + `); send one JSON-RPC message per line"}}` + "\n"))
			continue
		}
		m.mu.Lock()
		for _, msg := range messages(trimmed) {
			if _, isReq := msg["method"]; !isReq {
				continue
			}
			if k, ok := idKey(msg["id"]); ok {
				m.pending[k] = true
			}
		}
		m.mu.Unlock()
		m.buf.Write(trimmed)
		m.buf.WriteByte('\n')
	}
	return m.buf.Read(p)
}

// readLine reads one line, refusing one longer than the SDK's frame bound.
func (m *mcpStdio) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := m.in.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > sdk.DefaultMaxLineLength {
			return nil, fmt.Errorf("mcp: input line %d is longer than %d bytes; send one JSON-RPC message per line", m.line+1, sdk.DefaultMaxLineLength)
		}
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil // a last line without a newline
		default:
			return nil, err
		}
	}
}

// waitDrained blocks until every request read has been answered, or the session is stopped.
func (m *mcpStdio) waitDrained() {
	for {
		m.mu.Lock()
		if len(m.pending) == 0 {
			m.mu.Unlock()
			return
		}
		ch := m.drained
		m.mu.Unlock()
		select {
		case <-ch:
		case <-m.stop:
			return
		}
	}
}

// write passes a frame to stdout (the SDK writes one frame per call, with its newline) and
// marks the requests it answers.
func (m *mcpStdio) write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.out.Write(p)
	for _, msg := range messages(bytes.TrimSpace(p)) {
		if _, isReq := msg["method"]; isReq {
			continue
		}
		if k, ok := idKey(msg["id"]); ok && m.pending[k] {
			delete(m.pending, k)
		}
	}
	if len(m.pending) == 0 {
		close(m.drained)
		m.drained = make(chan struct{})
	}
	return n, err
}

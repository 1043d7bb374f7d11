package server

import (
	"net/http/httptest"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// stalledBody is a request body whose client sends a few bytes of what it announced and then
// stops (its read fails as the body's deadline makes it fail).
type stalledBody struct{ sent bool }

func (b *stalledBody) Read(p []byte) (int, error) {
	if b.sent {
		return 0, os.ErrDeadlineExceeded
	}
	b.sent = true
	return copy(p, `{"s":`), nil
}

// TestRedteamCallBodyMemoryFollowsTheBytesSent: a call's body takes memory as its bytes arrive,
// not at the length its client announces. A buffer of the announced length, made before the
// bytes come, lets each of MaxConns connections that announce MaxBody and send nothing hold
// MaxBody of the server's memory for the whole BodyTimeout (1024 x --max-body).
func TestRedteamCallBodyMemoryFollowsTheBytesSent(t *testing.T) {
	f := openForge(t, t.TempDir())
	const announced = 256 << 20
	s := New(f, Options{Logger: quietLogger(), MaxBody: announced})
	r := httptest.NewRequest("POST", "http://127.0.0.1/v1/call/text/upper", &stalledBody{})
	r.ContentLength = announced
	r.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s.ServeHTTP(rec, r)
	runtime.ReadMemStats(&after)
	assert.NotEqual(t, 200, rec.Code, rec.Body.String())
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated for a body of 5 bytes that announced %d", announced)
}

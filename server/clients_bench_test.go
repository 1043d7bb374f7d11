package server

import (
	"net/http/httptest"
	"testing"
)

// BenchmarkClientGate is what client identities cost a request (README, "Trust boundary"): the
// token's lookup by SHA-256, the client's rate limiter and its roles, and the context that names
// the client. Compare with BenchmarkHTTPCall (a whole warm call over HTTP).
func BenchmarkClientGate(b *testing.B) {
	cs, err := ParseClients([]byte(`
- name: agent
  token: a-long-random-token-of-at-least-16-chars
  roles: [text, calc]
  rate: 1000000000/s
`))
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest("POST", "http://127.0.0.1:7077/v1/call/text/upper", nil)
	r.Header.Set("Authorization", "Bearer a-long-random-token-of-at-least-16-chars")
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := cs.gate(w, r, ""); !ok {
			b.Fatal("refused")
		}
	}
}

package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The guards' cost per request (README, "Serving"): the host check, the cross-site check and the
// JSON check of a call, and of a read; "browser" is a same-origin call from a page (Origin and
// Sec-Fetch-Site set). Compare with BenchmarkHTTPCall (a whole warm call over HTTP).
func BenchmarkGuard(b *testing.B) {
	g, err := newGuard(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	call := httptest.NewRequest("POST", "http://127.0.0.1:7077/v1/call/text/upper", nil)
	call.Header.Set("Content-Type", "application/json")
	read := httptest.NewRequest("GET", "http://localhost:7077/v1/roles", nil)
	browser := httptest.NewRequest("POST", "http://127.0.0.1:7077/v1/call/text/upper", nil)
	browser.Header.Set("Content-Type", "application/json")
	browser.Header.Set("Origin", "http://127.0.0.1:7077")
	browser.Header.Set("Sec-Fetch-Site", "same-origin")
	w := httptest.NewRecorder()
	for _, c := range []struct {
		name string
		r    *http.Request
	}{{"call", call}, {"read", read}, {"browser", browser}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !g.check(w, c.r) {
					b.Fatal("refused")
				}
			}
		})
	}
}

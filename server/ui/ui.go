// Package ui is the operator console of `forge serve`, served at /ui: static files (plain HTML,
// CSS and JavaScript, embedded; no CDN, no build step) that read and act only through the
// server's public HTTP API, as any other client does. Code and every stored text are put on the
// page as text (textContent), never as HTML; the Content-Security-Policy lets the page run only
// its own script and connect only to its own origin.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// csp allows the console's own files and its own origin only: no inline script, no eval, no
// other host, no framing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the console's files (mount it with the prefix stripped: /ui/app.js is app.js).
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	return Secure(http.FileServer(http.FS(sub)))
}

// Secure sets the console's headers on every response of h (its files, their 404s, the redirect
// of /ui): the policy above, and X-Frame-Options for browsers that predate frame-ancestors, so
// that no other site frames the operator's buttons.
func Secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}

// Package redact hides secrets in text that goes out: log lines, messages, outputs.
package redact

import "strings"

// Redacted is what a secret prints as.
const Redacted = "REDACTED"

// URL hides the credentials of a URL (user:password@, token@) for every message, log line and
// output that names it (store URLs, provider base URLs): everything before the last @ after the scheme, since a
// password may hold unescaped /, ? or @, so no URL structure is trusted. A spec without @ (a
// directory, a URL without credentials) is returned as it is. It is the one redaction of URLs:
// every package that prints one calls it.
func URL(spec string) string {
	at := strings.LastIndex(spec, "@")
	if at < 0 {
		return spec
	}
	if scheme, _, ok := strings.Cut(spec[:at], "://"); ok && !strings.ContainsAny(scheme, "/@?") {
		return scheme + "://" + Redacted + spec[at:]
	}
	return Redacted + spec[at:]
}

package registry

import "strings"

// Redacted is what a secret prints as.
const Redacted = "REDACTED"

// RedactURL hides the credentials of a store URL (user:password@, token@) for every message, log
// line and output that names the store: everything before the last @ after the scheme, since a
// password may hold unescaped /, ? or @, so no URL structure is trusted. A spec without @ (a
// directory, a URL without credentials) is returned as it is. It is the one redaction of store
// URLs: every package that prints one calls it.
func RedactURL(spec string) string {
	at := strings.LastIndex(spec, "@")
	if at < 0 {
		return spec
	}
	if scheme, _, ok := strings.Cut(spec[:at], "://"); ok && !strings.ContainsAny(scheme, "/@?") {
		return scheme + "://" + Redacted + spec[at:]
	}
	return Redacted + spec[at:]
}

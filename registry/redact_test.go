package registry

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"nats://user:pw@127.0.0.1:4222/forge":        "nats://REDACTED@127.0.0.1:4222/forge",
		"nats://tok@127.0.0.1:4222/forge":            "nats://REDACTED@127.0.0.1:4222/forge",
		"nats://u:p/a?s@s@host:4222/forge":           "nats://REDACTED@host:4222/forge", // a password with / ? @ in clear
		"user:pw@host:4222":                          "REDACTED@host:4222",
		"nats://127.0.0.1:4222/forge":                "nats://127.0.0.1:4222/forge",
		"/var/lib/forge":                             "/var/lib/forge",
		"s3://key:secret/with/slashes@bucket/prefix": "s3://REDACTED@bucket/prefix",
	} {
		got := RedactURL(in)
		assert.Equal(t, want, got, in)
		for _, secret := range []string{"pw", "tok", "p/a?s", "secret"} {
			if strings.Contains(in, secret) && !strings.Contains(want, secret) {
				assert.NotContains(t, got, secret, in)
			}
		}
	}
}

// TestUnknownSchemeErrorRedactsSlashPassword: the store error for a scheme with no backend named
// the URL with a password that holds a / in clear (the old redaction trusted the first /).
func TestUnknownSchemeErrorRedactsSlashPassword(t *testing.T) {
	_, err := OpenBackend("zz://user:pa/ss@host/x", OpenOptions{})
	if assert.Error(t, err) {
		assert.NotContains(t, err.Error(), "pa/ss")
	}
}

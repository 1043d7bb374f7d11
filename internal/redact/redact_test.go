package redact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"nats://user:pw@127.0.0.1:4222/forge":        "nats://REDACTED@127.0.0.1:4222/forge",
		"nats://tok@127.0.0.1:4222/forge":            "nats://REDACTED@127.0.0.1:4222/forge",
		"nats://u:p/a?s@s@host:4222/forge":           "nats://REDACTED@host:4222/forge", // a password with / ? @ in clear
		"user:pw@host:4222":                          "REDACTED@host:4222",
		"nats://127.0.0.1:4222/forge":                "nats://127.0.0.1:4222/forge",
		"/var/lib/forge":                             "/var/lib/forge",
		"s3://key:secret/with/slashes@bucket/prefix": "s3://REDACTED@bucket/prefix",
	} {
		got := URL(in)
		assert.Equal(t, want, got, in)
		for _, secret := range []string{"pw", "tok", "p/a?s", "secret"} {
			if strings.Contains(in, secret) && !strings.Contains(want, secret) {
				assert.NotContains(t, got, secret, in)
			}
		}
	}
}

package registry

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUnknownSchemeErrorRedactsSlashPassword: the store error for a scheme with no backend named
// the URL with a password that holds a / in clear (the old redaction trusted the first /).
func TestUnknownSchemeErrorRedactsSlashPassword(t *testing.T) {
	_, err := OpenBackend("zz://user:pa/ss@host/x", OpenOptions{})
	if assert.Error(t, err) {
		assert.NotContains(t, err.Error(), "pa/ss")
	}
}

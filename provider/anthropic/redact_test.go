package anthropic_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/artifactforge/forge/provider/anthropic"
)

// TestBaseURLCredentialsStayOutOfErrors: a base URL with credentials in it is named redacted.
func TestBaseURLCredentialsStayOutOfErrors(t *testing.T) {
	_, err := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: "ftp://user:S3cret@proxy.internal/v1"})
	if assert.Error(t, err) {
		assert.NotContains(t, err.Error(), "S3cret")
		assert.Contains(t, err.Error(), "REDACTED@")
	}
}

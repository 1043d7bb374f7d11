package openai_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/artifactforge/forge/provider/openai"
)

// TestBaseURLCredentialsStayOutOfErrors: a base URL with credentials in it (a proxy's
// user:password@) is named redacted in configuration errors.
func TestBaseURLCredentialsStayOutOfErrors(t *testing.T) {
	for _, base := range []string{"ftp://user:S3cret@proxy.internal/v1", "http://user:S3cret@localhost:11434/v1"} {
		_, err := openai.New(openai.Config{BaseURL: base})
		if assert.Error(t, err, base) {
			assert.NotContains(t, err.Error(), "S3cret", base)
			assert.Contains(t, err.Error(), "REDACTED@", base)
		}
	}
}

package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// These tests come from trying forge as a new user and an operator would, following the README.

// TestHelpListsEachCommandOnce: `forge --help` listed quarantine twice (it was registered by two
// files).
func TestHelpListsEachCommandOnce(t *testing.T) {
	code, out, _ := runCLI(t, "--help")
	assert.Equal(t, 0, code)
	seen := map[string]bool{}
	in := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Available Commands:") {
			in = true
			continue
		}
		if in && strings.TrimSpace(line) == "" {
			break
		}
		if in {
			name := strings.Fields(line)[0]
			assert.False(t, seen[name], "command %s listed twice", name)
			seen[name] = true
		}
	}
	assert.True(t, seen["quarantine"], out)
}

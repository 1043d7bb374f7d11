package main

// Temporary anchor so that go.mod keeps every dependency while packages are being written.
// Remove once each dependency is imported by real code.
import (
	_ "github.com/anthropics/anthropic-sdk-go/v2"
	_ "github.com/gofrs/flock"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/spf13/cobra"
	_ "github.com/stretchr/testify/assert"
	_ "github.com/stretchr/testify/require"
	_ "github.com/tetratelabs/wazero"
	_ "github.com/traefik/yaegi/interp"
	_ "golang.org/x/sync/singleflight"
)

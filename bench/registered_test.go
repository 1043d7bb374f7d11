package bench

// The tests run forges with the backends, providers and stores the binary ships.
import _ "github.com/artifactforge/forge/forge/all"

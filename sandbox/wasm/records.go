package wasm

import "github.com/artifactforge/forge/sandbox/internal/guestgen"

// records are the checksums of what the wasm cache holds (guestgen.Records: the cache is not
// trusted).
type records = guestgen.Records

func sha256Hex(b []byte) string { return guestgen.SHA256Hex(b) }

func recordRoot(dir string) string { return guestgen.RecordRoot(dir) }

// moduleRecord is where the SHA-256 of the module with content key key is recorded.
func moduleRecord(key string) string { return "modules/" + key }

package sandbox

import (
	_ "embed"
	"strings"
)

//go:embed args.go
var argsGo string

// ArgDecoderSource is args.go (UnmarshalArg, NumberValue) as the source of a package named pkg, so
// that a backend decoding arguments inside its guest (wasm) compiles the very same number rule
// rather than a second copy of it.
func ArgDecoderSource(pkg string) string {
	return strings.Replace(argsGo, "package sandbox", "package "+pkg, 1)
}

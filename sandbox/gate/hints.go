package gate

// The gate's hint tables, for callers that build text of their own from a refusal (forge's
// lessons) and must not copy the refusal's message, which quotes the guest's code.

// PackageHint returns the gate's hint for an import path it refuses by name ("os": "artifacts get
// no files, ...") and whether it has one.
func PackageHint(path string) (string, bool) {
	h, ok := deniedPackages[path]
	return h, ok
}

// SymbolHint returns the gate's hint for a refused symbol of a package, written with the
// package's default name ("time.Now"), and whether it has one.
func SymbolHint(sym string) (string, bool) {
	h, ok := deniedSymbols[sym]
	return h, ok
}

package registry

import (
	"path/filepath"
	"strings"
)

// IsURL reports whether the store spec names a backend by URL (SCHEME://..., OpenBackend opens
// it with the backend registered under SCHEME) rather than a directory: a scheme that is not
// empty and holds no path separator ("a/b://c" is a directory).
func IsURL(spec string) bool {
	scheme, _, ok := strings.Cut(spec, "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, `/\`)
}

// SameStore reports whether two store specs name the same store as far as can be told without
// opening them: the same URL, or the same directory (after making both absolute).
func SameStore(a, b string) bool {
	if IsURL(a) || IsURL(b) {
		return a == b
	}
	pa, err1 := filepath.Abs(a)
	pb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && pa == pb
}

package registry

import (
	"fmt"
	"strconv"
	"strings"
)

// SchemaVersion is the on-disk schema this package reads and writes. A file with another schema
// version is incompatible: it is left in place (a newer forge may own it) and reported.
const SchemaVersion = 1

// RuntimeVersion is the version of the forge runtime that executes artifacts. Artifacts record the
// runtime that verified them; only a change of major version makes them incompatible.
const RuntimeVersion = "0.1.0"

// MajorVersion returns the major component of a semantic version such as "1.4.2" or "v1".
func MajorVersion(v string) (int, error) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("registry: runtime version %q is not a semantic version", v)
	}
	return n, nil
}

// RuntimeCompatible reports whether an artifact verified under runtime version artifactV can run
// under runtime version current: same major version.
func RuntimeCompatible(artifactV, current string) bool {
	a, err1 := MajorVersion(artifactV)
	c, err2 := MajorVersion(current)
	return err1 == nil && err2 == nil && a == c
}

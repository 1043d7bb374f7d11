package registry

import (
	"errors"
	"fmt"
)

// ErrInvalidName is returned for a role or method name that could not safely be a file name.
var ErrInvalidName = errors.New("invalid name")

// ValidateName checks a role or method name. Names become path elements, so only lower-case ASCII
// letters, digits and underscores are accepted, starting with a letter, at most 64 bytes: no path
// separators, dots, spaces or look-alike unicode can reach the file system.
func ValidateName(kind, name string) error {
	if validName(name) {
		return nil
	}
	why := "use lower-case letters, digits and _, starting with a letter, at most 64 characters (e.g. text_tools)"
	if name == "" {
		why = "it is empty; " + why
	}
	return fmt.Errorf("%w: %s name %q: %s", ErrInvalidName, kind, name, why)
}

// validName is ^[a-z][a-z0-9_]{0,63}$ without a regexp: it is on the warm call path.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

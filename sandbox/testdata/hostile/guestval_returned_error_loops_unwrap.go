// args: []
// timeout: 300ms
// kind: returned
// contains: plain text
package artifact

type sneaky struct{ n *int }

func (s sneaky) Error() string { return "plain text" }

func (s sneaky) Unwrap() error {
	for {
		*s.n++
	}
}

func (s sneaky) Is(target error) bool {
	for {
		*s.n++
	}
}

// Fail returns an error whose Unwrap and Is never return: the host must not call them either.
func Fail() error {
	n := 0
	return sneaky{&n}
}

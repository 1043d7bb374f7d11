// args: []
// timeout: 300ms
// kind: deadline
package artifact

type slow struct{ n *int }

func (s slow) Error() string {
	for {
		*s.n++
	}
}

// Fail returns an error whose Error method never returns.
func Fail() (int, error) {
	n := 0
	return 0, slow{&n}
}

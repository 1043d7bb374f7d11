// args: []
// want: [1024, 1048576]
package artifact

type size int64

const (
	_       = iota
	kb size = 1 << (10 * iota)
	mb
)

func Sizes() []int64 { return []int64{int64(kb), int64(mb)} }

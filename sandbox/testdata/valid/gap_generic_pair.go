// args: []
// want: ["a", 1]
package artifact

type pair[K comparable, V any] struct {
	key K
	val V
}

func newPair[K comparable, V any](k K, v V) pair[K, V] { return pair[K, V]{k, v} }

func Pair() []any {
	p := newPair("a", 1)
	return []any{p.key, p.val}
}

// args: []
// kind: panic
package artifact

type node struct{ next *node }

func Walk() int {
	var n *node
	return len(n.next.next.String())
}

func (n *node) String() string { return "" }

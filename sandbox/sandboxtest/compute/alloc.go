package compute

type treeNode struct{ left, right *treeNode }

func makeTree(depth int) *treeNode {
	if depth == 0 {
		return &treeNode{}
	}
	return &treeNode{makeTree(depth - 1), makeTree(depth - 1)}
}

func (t *treeNode) count() int {
	if t.left == nil {
		return 1
	}
	return 1 + t.left.count() + t.right.count()
}

// Trees builds and walks n binary trees of depth 12 (8,191 nodes each) that die young:
// allocation and garbage collection heavy.
func Trees(n int) int {
	total := 0
	for i := 0; i < n; i++ {
		total += makeTree(12).count()
	}
	return total
}

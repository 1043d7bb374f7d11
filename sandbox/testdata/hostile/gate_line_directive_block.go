// args: []
// kind: policy
// contains: /*line
package artifact

// F hides its lines behind a block-comment line directive.
func F() int {
	/*line elsewhere.go:1*/ return 1
}

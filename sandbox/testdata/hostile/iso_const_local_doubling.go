// args: []
// kind: compile
// stage: compile
// contains: string constant
package artifact

// Constant doubling inside a function body folds as well as at package level.
func F() int {
	const a = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const b = a + a + a + a + a + a + a + a
	const c = b + b + b + b + b + b + b + b
	const d = c + c + c + c + c + c + c + c
	const e = d + d + d + d + d + d + d + d
	return len(e)
}

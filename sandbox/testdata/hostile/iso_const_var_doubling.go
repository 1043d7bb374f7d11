// args: []
// kind: compile
// stage: compile
// contains: string constant
package artifact

const a = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

const (
	b = a + a + a + a + a + a + a + a
	c = b + b + b + b + b + b + b + b
	d = c + c + c + c + c + c + c + c
)

// The folding happens in a variable's initializer, not in a constant declaration.
var v = d + d + d + d + d + d + d + d

func F() int { return len(v) }

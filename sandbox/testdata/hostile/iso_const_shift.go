// args: []
// kind: compile
// stage: compile
// contains: shift count
package artifact

const huge = 1 << 100000000

func F() bool { return huge > 0 }

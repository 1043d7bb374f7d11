// args: []
// kind: panic
// stage: compile
// contains: boom in init
package artifact

var table = build()

func build() []int { panic("boom in init") }

func F() int { return len(table) }

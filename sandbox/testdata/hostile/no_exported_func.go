// args: []
// kind: compile
package artifact

func hidden() int { return 1 }

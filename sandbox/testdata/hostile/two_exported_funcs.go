// args: []
// kind: compile
package artifact

func A() int { return 1 }

func B() int { return 2 }

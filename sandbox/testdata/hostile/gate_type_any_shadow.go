// args: []
// kind: policy
// contains: predeclared any
package artifact

// any redefined at package level would change the dispatcher's own "any" parameters.
type any = int

func F() any { return 1 }

// args: []
// kind: policy
// contains: predeclared len
package artifact

// len redefined at package level would break every generated len(...) in the package.
func len(s []byte) int { return 7 }

func F() int { return len(nil) }

// args: []
// kind: policy
package artifact

var forge__depth = -1000000

func F() int { return forge__depth }

// args: []
// kind: policy
package artifact

func main() {}

func F() int { return 1 }

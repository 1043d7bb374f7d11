// args: {}
// want: 42
package artifact

func Answer() int { return 42 }

// args: {}
// want: null
package artifact

func Empty() map[string]int { return nil }

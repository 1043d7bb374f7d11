// args: ["pear", "apple", "plum"]
// want: ["apple", "plum"]
package artifact

func MinMax(a, b, c string) []string { return []string{min(a, b, c), max(a, b, c)} }

// args: [3, 10]
// want: 7
package artifact

func max(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// Spread is max - min of its arguments, through the package-level min and max helpers models
// often write: the gate lets these two predeclared names be redeclared (no generated code uses them).
func Spread(a, b int) int { return max(a, b) - min(a, b) }

// args: [2]
// want: 4
func Square(x int) int { return x * x }

// args: [7]
// want: "odd"
package artifact

func Parity(n int) string {
	switch r := n % 2; {
	case r == 0:
		return "even"
	default:
		return "odd"
	}
}

// args: [1]
// want: "onetwo"
package artifact

func Words(n int) string {
	s := ""
	switch n {
	case 1:
		s += "one"
		fallthrough
	case 2:
		s += "two"
	default:
		s += "many"
	}
	return s
}

// args: [[1.5, "a", true, null, 2.5]]
// want: ["number", "string", "bool", "null", "number"]
package artifact

func Kinds(xs []any) []string {
	var out []string
	for _, x := range xs {
		switch x.(type) {
		case float64:
			out = append(out, "number")
		case string:
			out = append(out, "string")
		case bool:
			out = append(out, "bool")
		default:
			out = append(out, "null")
		}
	}
	return out
}

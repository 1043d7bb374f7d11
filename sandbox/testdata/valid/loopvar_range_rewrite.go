// args: [["a", "b"]]
// want: ["a", "b"]
package artifact

func Captured(xs []string) []string {
	var fs []func() string
	for _, x := range xs {
		fs = append(fs, func() string { return x })
	}
	var out []string
	for _, f := range fs {
		out = append(out, f())
	}
	return out
}

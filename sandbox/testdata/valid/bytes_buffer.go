// args: [["x", "y"]]
// want: "x;y;"
package artifact

import "bytes"

func Cat(xs []string) string {
	var b bytes.Buffer
	for _, x := range xs {
		b.WriteString(x)
		b.WriteString(";")
	}
	return b.String()
}

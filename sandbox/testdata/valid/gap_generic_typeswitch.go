// args: [3]
// want: "int:3 string:x"
package artifact

import "fmt"

func describe[T any](v T) string {
	switch x := any(v).(type) {
	case int:
		return fmt.Sprintf("int:%d", x)
	case string:
		return "string:" + x
	}
	return "other"
}

func Describe(n int) string { return describe(n) + " " + describe("x") }

// args: ["42"]
// want: 42
package artifact

import "strconv"

func ParseInt(s string) (int, error) {
	return strconv.Atoi(s)
}

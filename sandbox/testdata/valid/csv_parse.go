// args: ["a,b\n1,2\n"]
// want: [["a", "b"], ["1", "2"]]
package artifact

import (
	"encoding/csv"
	"strings"
)

func Rows(s string) ([][]string, error) { return csv.NewReader(strings.NewReader(s)).ReadAll() }

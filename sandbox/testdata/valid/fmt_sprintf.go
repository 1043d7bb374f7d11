// args: [3.14159, "pi"]
// want: "pi=3.14"
package artifact

import "fmt"

func Show(x float64, name string) string { return fmt.Sprintf("%s=%.2f", name, x) }

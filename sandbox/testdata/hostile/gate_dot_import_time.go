// args: []
// kind: policy
// contains: dot import
package artifact

import . "time"

// Year reaches time.Now as Now(): no selector names the package, so only the import can be refused.
func Year() int { return Now().Year() }

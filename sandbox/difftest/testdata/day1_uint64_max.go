// args: {}
// want: 18446744073709551615
package artifact

import "math"

func Max() uint64 { return math.MaxUint64 }

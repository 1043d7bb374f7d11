// args: []
// kind: policy
package artifact

import "math/rand"

func Roll() int { return rand.Intn(6) }

// args: []
// kind: policy
package artifact

import "C"

func Nothing() int { return 0 }

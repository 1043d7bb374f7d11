// args: []
// kind: policy
package artifact

import "./local"

func Do() int { return local.X }

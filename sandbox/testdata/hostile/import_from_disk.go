// args: []
// kind: policy
package artifact

import "github.com/evil/backdoor"

func Do() int { return backdoor.Run() }

// args: []
// kind: policy
package artifact

import _ "embed"

//go:embed secret.txt
var secret string

func Secret() string { return secret }

// args: []
// want: "+/8="
package artifact

import "encoding/base64"

// Read uses base64.StdEncoding after hoststate_base64_overwrite tried to replace it.
func Read() string { return base64.StdEncoding.EncodeToString([]byte{0xfb, 0xff}) }

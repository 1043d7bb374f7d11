// args: ["forge"]
// want: "Zm9yZ2U="
package artifact

import "encoding/base64"

func B64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

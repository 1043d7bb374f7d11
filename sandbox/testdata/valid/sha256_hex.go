// args: ["abc"]
// want: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
package artifact

import (
	"crypto/sha256"
	"encoding/hex"
)

func Sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// args: []
// want: ["+/8=", "-_8="]
package artifact

import "encoding/base64"

// Overwrite writes through *base64.StdEncoding: the write lands in this interpreter's own copy,
// so the host's encoder (used by the next program and the host itself) is untouched; see
// hoststate_base64_read, which runs after this case.
func Overwrite() []string {
	before := base64.StdEncoding.EncodeToString([]byte{0xfb, 0xff})
	*base64.StdEncoding = *base64.URLEncoding
	return []string{before, base64.StdEncoding.EncodeToString([]byte{0xfb, 0xff})}
}

// args: ["secret"]
// want: true
package artifact

import "unicode"

// Stash hides a value in unicode.Categories (a map every interpreter used to share with the
// host): now the write lands in this interpreter's own copy. See hoststate_unicode_categories_stash_read.
func Stash(secret string) bool {
	unicode.Categories["stash:"+secret] = &unicode.RangeTable{}
	_, ok := unicode.Categories["stash:"+secret]
	return ok
}

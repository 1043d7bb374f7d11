// args: ["abc"]
// kind: policy
// contains: dot import of "strings"
package artifact

import . "strings"

// Upper uses a harmless package through a dot import: refused all the same (the gate judges every
// package use by its selector).
func Upper(s string) string { return ToUpper(s) }

// args: []
// kind: policy
// contains: time.Now is not available
package artifact

// Year forgets the import: both backends would add it, so the gate judges time.Now as written.
func Year() int { return time.Now().Year() }

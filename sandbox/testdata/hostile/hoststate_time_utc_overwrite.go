// args: []
// want: "2020-01-02T03:04:05+01:00"
// backends: yaegi
package artifact

import "time"

// Shift overwrites *time.UTC with a +1h zone: only this interpreter's copy changes.
func Shift() string {
	*time.UTC = *time.FixedZone("EVIL", 3600)
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC3339)
}

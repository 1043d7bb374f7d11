// args: [90]
// want: 1970
package artifact

import "time"

// Year adds minutes to the epoch in UTC through a method value of an allowed type: no clock
// involved. (The method expression (time.Time).Add passes the gate too, on both backends, but the
// interpreter cannot call method expressions of native types.)
func Year(minutes int) int {
	add := time.Unix(0, 0).UTC().Add
	return add(time.Duration(minutes) * time.Minute).Year()
}

// args: []
// kind: compile
// contains: write_it_on_one_line
// backends: yaegi
package artifact

import "time"

// Shift writes the host's UTC location as the second target of a tuple assignment whose pointer
// expression spans two lines, inside a for loop's post statement. The check skipped pointer text
// spanning lines; a tuple assignment cannot be checked in place without moving lines, so the
// program is refused at compile time.
func Shift() string {
	var mine time.Location
	n := 0
	for ; n < 1; mine, *(time.Unix(0, 0).
		UTC().Location()) = *time.FixedZone("A", 0), *time.FixedZone("EVIL", 3600) {
		n++
	}
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.Unix(0, 0).UTC().Location()).Format(time.RFC3339) + mine.String()
}

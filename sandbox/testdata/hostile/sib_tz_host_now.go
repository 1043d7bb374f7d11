// args: []
// caps: {"now": true}
// want: ["UTC", 0, "UTC", true]
package artifact

import "forge/host"

// Now reads the zone of the host's clock as guest code gets it: UTC (both backends hand it
// out in time.UTC), not the host's zone.
func Now() []any {
	t := host.Now()
	name, off := t.Zone()
	return []any{name, off, t.Location().String(), t.Year() > 2000}
}

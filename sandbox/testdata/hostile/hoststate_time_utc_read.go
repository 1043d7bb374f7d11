// args: []
// want: "2020-01-02T03:04:05Z"
package artifact

import "time"

// Read formats a UTC time after hoststate_time_utc_overwrite shifted its own copy of time.UTC.
func Read() string { return time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC3339) }

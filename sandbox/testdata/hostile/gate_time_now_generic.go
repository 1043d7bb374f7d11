// args: []
// kind: policy
// contains: time.Now is not available
package artifact

import "time"

func apply[T any](f func() T) T { return f() }

// Year passes time.Now through a generic instantiation.
func Year() int { return apply[time.Time](time.Now).Year() }

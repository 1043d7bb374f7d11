//go:build !linux

package forge

// usableMemory is unknown off Linux: the live set's default memory budget is DefaultMaxLiveBytes.
func usableMemory() int64 { return 0 }

//go:build !race

package yaegi

const raceEnabled = false

//go:build !race

package forge

const raceEnabled = false

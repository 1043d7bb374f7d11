package compute

import "sort"

// SortInts sorts n pseudo-random ints and returns a checksum of their order.
func SortInts(n int) int {
	s := make([]int, n)
	x := uint64(7)
	for i := range s {
		x = x*6364136223846793005 + 1442695040888963407
		s[i] = int(x >> 33)
	}
	sort.Ints(s)
	sum := 0
	for i := 0; i < len(s); i += 97 {
		sum = (sum*31 + s[i]) % 1000000007
	}
	return sum
}

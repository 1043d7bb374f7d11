// args: {}
// want: [18446744073709551615, 9223372036854775808, 18446744073709551615, 255, 4294967295]
package artifact

import "math"

type U uint32

// Stores puts untyped constants above math.MaxInt64 into unsigned integers every way Go allows
// (yaegi v0.16.1 panicked on the return, the send and the index assignment).
func Stores() []uint64 {
	ch := make(chan uint64, 1)
	ch <- math.MaxUint64
	xs := []uint64{0}
	xs[0] = 1 << 63
	byteOf := func() byte { return 255 }
	u := func() U { return math.MaxUint32 }
	return []uint64{<-ch, xs[0], big(), uint64(byteOf()), uint64(u())}
}

func big() uint64 { return 1<<64 - 1 }

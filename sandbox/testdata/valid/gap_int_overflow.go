// args: []
// want: [-128, 255, -2147483648, 3]
package artifact

func Wrap() []int64 {
	var a int8 = 127
	a++
	var b uint8
	b--
	var c int32 = 1 << 30
	c *= 2
	return []int64{int64(a), int64(b), int64(c), int64(-7 / -2)}
}

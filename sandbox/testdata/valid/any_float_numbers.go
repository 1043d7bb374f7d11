// args: [3.0, 4, 7]
// want: false
package artifact

// AnyInt gets 3.0 as float64 (Go's type for the literal 3.0), so it is not all integers.
func AnyInt(x, y, z any) bool {
	xx, ok := x.(int)
	if !ok {
		return false
	}
	yy, ok := y.(int)
	if !ok {
		return false
	}
	zz, ok := z.(int)
	if !ok {
		return false
	}
	return xx+yy == zz || xx+zz == yy || yy+zz == xx
}

// args: [3, -2, 1]
// want: true
package artifact

// AnyInt is HumanEval Go/92's canonical solution: JSON integers must arrive in interface{}
// parameters as int (as the same Go literals would), not float64.
func AnyInt(x, y, z interface{}) bool {
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

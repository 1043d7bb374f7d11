// args: [25]
// want: "15511210043330985984000000"
package artifact

import "math/big"

func Fact(n int) string {
	r := big.NewInt(1)
	for i := 2; i <= n; i++ {
		r.Mul(r, big.NewInt(int64(i)))
	}
	return r.String()
}

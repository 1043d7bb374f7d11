// args: [3000]
// memory: 64MB
// timeout: 10s
// want: 3000
package artifact

// Churn only makes garbage: no allocation outlives its iteration, so a collector that keeps up
// never needs more than a few MiB. It must not end as "memory cap exceeded".
func Churn(n int) int {
	kept := 0
	for i := 0; i < n; i++ {
		b := make([]byte, 1<<20)
		b[i%len(b)] = 1
		kept += int(b[i%len(b)])
	}
	return kept
}

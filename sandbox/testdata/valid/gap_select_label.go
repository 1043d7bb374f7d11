// args: [5]
// want: 6
package artifact

func Drain(n int) int {
	ch := make(chan int, n)
	for i := 0; i < n; i++ {
		ch <- i
	}
	close(ch)
	s := 0
loop:
	for {
		select {
		case v, ok := <-ch:
			if !ok {
				break loop
			}
			if v%2 == 1 {
				continue loop
			}
			s += v
		}
	}
	return s
}

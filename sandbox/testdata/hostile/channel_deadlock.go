// args: []
// timeout: 300ms
// kind: deadline
package artifact

func Block() int {
	ch := make(chan int)
	ch <- 1
	return <-ch
}

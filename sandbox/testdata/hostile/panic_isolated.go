// args: []
// isolation: process
// backends: yaegi
// kind: panic
// contains: boom
package artifact

func Boom() int { panic("boom") }

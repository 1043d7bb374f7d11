// args: []
// kind: panic
// contains: boom
package artifact

func Boom() int { panic("boom") }

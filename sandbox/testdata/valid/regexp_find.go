// args: ["call 555-1234 or 555-9876"]
// want: ["555-1234", "555-9876"]
package artifact

import "regexp"

var phone = regexp.MustCompile(`\d{3}-\d{4}`)

func Phones(s string) []string { return phone.FindAllString(s, -1) }

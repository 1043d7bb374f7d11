// args: []
// kind: policy
package artifact

import "reflect"

func Kind() string { return reflect.ValueOf(1).Kind().String() }

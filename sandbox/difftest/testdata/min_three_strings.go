// want: "apple"
package artifact

func Min3() string { return min("pear", "apple", "plum") }

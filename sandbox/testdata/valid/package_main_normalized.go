// args: ["x"]
// want: "x!"
package main

func Bang(s string) string { return s + "!" }

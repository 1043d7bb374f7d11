// args: {}
// want: "a\ufffdb"
package artifact

func Bad() string { return "a\xffb" }

//go:build !amd64 && !arm64

package native

// hostSysnums is empty where the backend does not run (Available says so).
var hostSysnums = sysnums{}

package gate

import "slices"

// HostPackage is the import path of the host API inside the sandbox.
const HostPackage = "forge/host"

// hostAPI is what package forge/host exports to guest code (functions and types), sorted. Each
// backend's implementation (the yaegi host exports, the wasm host shim) is tested against it, and
// so is the system prompt; the gate refuses any other host.X.
var hostAPI = []string{"Call", "CallInto", "Do", "Get", "Log", "Logf", "Now", "Rand", "RandIntn", "Request", "Response"}

// HostAPI lists the names package forge/host exports to guest code (functions and types), sorted:
// the one list prompts and both backends' host bindings are checked against.
func HostAPI() []string { return slices.Clone(hostAPI) }

func isHostName(name string) bool {
	_, ok := slices.BinarySearch(hostAPI, name)
	return ok
}

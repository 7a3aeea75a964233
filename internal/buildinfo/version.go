// Package buildinfo reports the version of the running bakeoff binary, which
// is recorded in every result so runs can be traced to the code that made them.
package buildinfo

import "runtime/debug"

// version is set at link time by the Makefile (-X ...buildinfo.version=...).
var version = ""

// Version returns the link-time version, else the module version, else the
// VCS revision, else "devel".
func Version() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel-" + s.Value[:12]
		}
	}
	return "devel"
}

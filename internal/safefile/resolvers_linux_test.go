//go:build linux && !safefile_osroot

package safefile

// resolvers are the ways Open can resolve names here; every hostile case runs with each. The walk is what kernels
// without openat2 get, forced here since this kernel has openat2.
func resolvers() map[string]func(*Dir) {
	return map[string]func(*Dir){
		"openat2": func(d *Dir) { d.walk = false },
		"walk":    func(d *Dir) { d.walk = true },
	}
}

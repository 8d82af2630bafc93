//go:build !race

package modern

const raceBuild = false

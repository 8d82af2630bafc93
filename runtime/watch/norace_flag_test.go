//go:build !race

package watch

const raceBuild = false

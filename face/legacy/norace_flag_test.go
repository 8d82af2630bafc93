//go:build !race

package legacyface_test

const raceBuild = false

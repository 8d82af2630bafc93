//go:build !race

package authe2e_test

const raceBuild = false

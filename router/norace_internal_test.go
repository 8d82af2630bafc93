//go:build !race

package router

const raceBuild = false

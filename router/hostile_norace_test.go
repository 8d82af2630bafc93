//go:build !race

package router_test

const hostileRace = false

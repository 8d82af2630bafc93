//go:build !race

package server_test

const hostileRace = false

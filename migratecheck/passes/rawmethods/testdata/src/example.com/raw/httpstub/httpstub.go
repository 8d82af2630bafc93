// Package httpstub stands in for net/http (kept out of testdata to keep the
// tests fast): only the StatusNotFound name matters to the R1 exemption.
package httpstub

const StatusNotFound = 404

// Command cli prints the tasks of a server.
package main

import (
	"fmt"
	"net/http"
	"os"

	"example.com/kvengine/client"
)

func main() {
	c := &client.Conn{URL: os.Args[1], HTTP: http.DefaultClient}
	raw, err := client.ListAll(c) // want MCP002
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(raw))
}

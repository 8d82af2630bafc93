// Command ordersrv exposes the order-export tools of a web shop over MCP
// (streamable HTTP). Exports run for minutes, so they are tasks.
package main

import (
	"log"
	"os"

	"github.com/mark3labs/mcp-go/server"
)

func main() {
	cfg := config{Name: "ordersrv", Version: "2.3.0", MaxTasks: 8, Addr: ":8080"}
	if a := os.Getenv("ORDERSRV_ADDR"); a != "" {
		cfg.Addr = a
	}
	s := newServer(cfg)
	log.Printf("ordersrv listening on %s", cfg.Addr)
	if err := server.NewStreamableHTTPServer(s).Start(cfg.Addr); err != nil {
		log.Fatal(err)
	}
}

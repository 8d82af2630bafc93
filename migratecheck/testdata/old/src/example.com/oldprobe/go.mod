module example.com/oldprobe

go 1.24

require github.com/mark3labs/mcp-go v0.47.0

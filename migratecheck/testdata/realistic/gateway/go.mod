module example.com/gateway

go 1.26.0

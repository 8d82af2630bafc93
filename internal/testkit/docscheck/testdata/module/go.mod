module example.com/orders-agent

go 1.26

module example.com/kvengine

go 1.26.0

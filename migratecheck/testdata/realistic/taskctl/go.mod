module example.com/taskctl

go 1.26.0

module example.com/taskstore

go 1.26.0

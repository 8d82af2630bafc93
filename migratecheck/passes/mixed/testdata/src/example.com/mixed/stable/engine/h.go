package engine

func serveh(method string) any {
	switch method {
	case "tasks/list":
		return nil
	}
	return nil
}

package engine

func servec(method string) any {
	switch method {
	case "tasks/list":
		return nil
	}
	return nil
}

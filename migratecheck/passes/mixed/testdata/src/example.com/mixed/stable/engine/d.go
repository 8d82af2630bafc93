package engine

func served(method string) any {
	switch method {
	case "tasks/list":
		return nil
	}
	return nil
}

package engine

func servef(method string) any {
	switch method {
	case "tasks/list":
		return nil
	}
	return nil
}

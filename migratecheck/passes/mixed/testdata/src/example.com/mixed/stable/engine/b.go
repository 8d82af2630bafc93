package engine

func serveb(method string) any {
	switch method {
	case "tasks/list":
		return nil
	}
	return nil
}

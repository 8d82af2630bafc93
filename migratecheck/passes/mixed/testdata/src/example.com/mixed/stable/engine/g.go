package engine

func serveg(method string) any {
	switch method {
	case "tasks/list":
		return nil
	}
	return nil
}

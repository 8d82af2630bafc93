package engine

func servee(method string) any {
	switch method {
	case "tasks/list":
		return nil
	}
	return nil
}

package engine

func serveg(method string) any {
	switch method {
	case "tasks/list": // want `"tasks/list" is used as a JSON-RPC method name`
		return nil
	}
	return nil
}

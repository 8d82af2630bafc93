package modernface

// SDKBuilds reports how many times f built go-sdk's server (0 while every
// request took the lean path).
func SDKBuilds(f *Face) int64 { return f.sdkBuilds.Load() }

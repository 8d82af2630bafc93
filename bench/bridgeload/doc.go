// Package bridgeload measures the bridge's legacy face: it drives a legacy 2025-11-25 client through the bridge and a
// modern 2026-07-28 client straight to the same embedded upstream
// (internal/demo), and reports each figure next to its direct baseline from
// the same run.
//
// The package holds the parts shared by the go test benchmarks (bench_test.go,
// `go test -bench`) and the load tool (bench/cmd/bridgeload): raw JSON-RPC
// clients of both eras that speak Streamable HTTP by hand (so both paths use
// one HTTP client configuration and the client costs the same on both sides),
// in-process and child-process bridges, the bare reverse proxy of the cost
// floor, latency summaries, /proc memory and CPU readings and the scenarios:
//
//  1. EchoLatency and CompareThroughput: synchronous tools/call through the
//     bridge against the same call made directly upstream and through a bare
//     httputil.ReverseProxy (CPU per call of each proxy process);
//  2. GetRate: upstream tasks/get requests for one task with 100 blocked
//     tasks/result waiters against one task with a single waiter, over the
//     same window (docs/ARCHITECTURE.md, One watcher per upstream task);
//  3. ManyWaiters: the resident memory of a bridge process holding N blocked
//     tasks/result streams;
//  4. ResultDelay: time from the upstream completing a task (demo.CompleteNow)
//     to the legacy client's tasks/result answer, push and poll paths;
//  5. IdleSessions and SessionExpiry: what idle legacy sessions cost, and
//     whether they are gone after the idle timeout;
//  6. StoreWriters: durable creates with one writer and with many;
//  7. ManyTasks: what blocked tasks/result waits cost when each is on a task
//     of its own (RSS, goroutines and descriptors per wait, the upstream
//     subscriptions/listen requests held), and another principal's round
//     trips meanwhile.
//
// Nothing here is a test: timings are reported, never asserted.
package bridgeload

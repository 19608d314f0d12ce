// Package abtest is nodekit's A/B harness: it runs one scripted workload
// under two (or more) variants, one after the other, on the same runtime,
// each a whole agent (nodekit.New with nodekit.Defaults() and the
// variant's fx options), and reports per variant and as ratios B over A:
// pod start p50 and p99 (and of the high-priority pods), how long after a
// container exits its pod worker is woken with the exit in hand (p50, p99,
// max, and where the time goes), the agent's CPU time and RSS, its CRI
// calls per minute, the pods admission refused and the pods evicted, and
// the evented PLEG's missed events.
//
// A variant is comma-separated key=value swaps, each a registered Swap:
// a function from the Workload to fx options. New registers the built-ins
// (see Builtins): pleg=generic|evented, start=fifo|priority,
// admission=default|deny. An embedder adds their own with Register and
// keeps the command line of cmd/plegab with Main:
//
//	h := abtest.New()
//	h.Register("admission", "mine", func(w abtest.Workload) []fx.Option {
//		return []fx.Option{abtest.AdmissionHandler(myHandler)}
//	})
//	os.Exit(h.Main(os.Args[1:])) // --a admission=default --b admission=mine
//
// or calls Harness.Run for the figures (a Report). docs/ab.md has the
// flags, measurement notes and tables it produced.
//
// The workload is N static pods of one container each that exits (code 1)
// a known time after each start (ExitAfter, spread over ExitSpread across
// the pods), and is restarted by the agent with the kubelet's
// CrashLoopBackOff; every HighEvery'th pod has priority HighPriority and
// every DenyEvery'th carries DenyLabel. Measurement starts once every pod
// runs (or was refused or evicted) and lasts Duration. On the simulated
// runtime the runtime runs in the harness's process, so the CPU and RSS
// figures include it; on a CRI runtime they are the agent's alone.
//
// The package sits at the module root's level, beside cmd/ and examples/,
// because it builds whole agents through the root package nodekit (which
// a package the root imports could not do), and it is a library, not the
// tests and benchmarks that test/ holds.
package abtest

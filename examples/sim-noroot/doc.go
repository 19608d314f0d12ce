// Command sim-noroot runs the whole nodekit agent on the simulated runtime
// as an ordinary user: no root, no container runtime, no API server, every
// file in a temporary directory (or --root-dir), no port opened. It runs
// the static pods of --manifests (a built-in "hello" pod without it) and
// prints a line as each one runs; with --until-running it exits once they
// all do. The swap is the runtime (Config.Runtime = sim) and the paths.
//
//	sim-noroot --until-running
package main

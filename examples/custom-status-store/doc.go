// Command custom-status-store runs nodekit's default agent with its status
// store decorated: PhaseHistory records every phase each pod goes through
// (Pending, Running, Succeeded...) beside the default status manager,
// which still writes the statuses to the API server, and serves them as
// JSON at --history-addr. It is the whole swap: one fx.Decorate.
//
//	custom-status-store --manifests DIR --runtime sim --history-addr 127.0.0.1:8099
package main

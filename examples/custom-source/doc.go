// Command custom-source runs nodekit's default agent with one more pod
// source: QueueSource takes pods from a message queue (here a channel, fed
// from standard input, one JSON message a line) and runs them as static
// pods, with the same defaults, naming and UIDs as the HTTP manifest
// source. It is the whole swap: one source in the "sources" group.
//
//	echo '{"key":"web","manifest":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"busybox:1"}]}}}' |
//	    custom-source --runtime sim
//
// A message with "delete": true removes the key's pod.
package main

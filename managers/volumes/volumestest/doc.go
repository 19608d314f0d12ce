// Package volumestest has a configurable fake volumes.Manager for tests of
// code that uses one (the agent, a runtime): it sets up nothing on disk,
// hands out the host paths it is told, and records every call.
package volumestest

// Package promutil holds the one helper every nodekit package uses to put
// its metrics on the registry it is given.
package promutil

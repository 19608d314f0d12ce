// Package atomicfile writes a file so that a reader, or the agent after a
// crash or a power cut, sees either the old content or the new one, never a
// part: the checkpoints of API pods and Services and the graceful shutdown
// state go through it.
package atomicfile

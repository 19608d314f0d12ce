package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is a started agent process (the nodekit agents or kwok).
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func startProcess(cmd *exec.Cmd, logPath string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	p := &process{cmd: cmd, log: logPath, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// exited returns an error once the process has exited.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited: %v; log:\n%s", p.cmd.Path, p.err, p.tail())
	default:
		return nil
	}
}

// usage is what the kernel accounted to a process that has exited.
type usage struct {
	cpu    time.Duration // user + system
	maxRSS uint64        // peak resident set, bytes
}

// stopPatience is how long stop waits after SIGTERM before SIGKILL: 100
// agents on a CPU-starved machine took over a minute to stop.
const stopPatience = 5 * time.Minute

// stop sends SIGTERM (SIGKILL after stopPatience), waits for the exit and
// returns the process's CPU and peak RSS over its whole life.
func (p *process) stop() usage {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopPatience):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	st := p.cmd.ProcessState
	u := usage{cpu: st.UserTime() + st.SystemTime()}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		u.maxRSS = uint64(ru.Maxrss) << 10 // KiB on Linux
	}
	return u
}

// tail returns the last lines of the process's log.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

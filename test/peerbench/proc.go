package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// clockTick is the kernel's USER_HZ, the unit of /proc/PID/stat's times.
const clockTick = 100

// cpuOf returns the CPU time (user + system, with reaped children's) pid
// used so far.
func cpuOf(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// utime, stime, cutime, cstime are fields 14-17, here 11-14 (0-based
	// after the state at index 0, which is field 3).
	if len(f) < 15 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var ticks int64
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTick, nil
}

// memory is a process's resident memory, in bytes.
type memory struct {
	rss  uint64 // VmRSS: all resident pages
	hwm  uint64 // VmHWM: the peak of rss
	anon uint64 // RssAnon: the heap, stacks and other private memory
	file uint64 // RssFile: file-backed pages, nearly all the binary's own
	// (shared with the page cache)
}

// memoryOf reads pid's resident memory from /proc/PID/status.
func memoryOf(pid int) (memory, error) {
	var m memory
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, err
	}
	fields := map[string]*uint64{"VmRSS": &m.rss, "VmHWM": &m.hwm, "RssAnon": &m.anon, "RssFile": &m.file}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		dst := fields[k]
		if !ok || dst == nil {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return m, fmt.Errorf("/proc/%d/status %s: %w", pid, k, err)
		}
		*dst = n << 10
	}
	if m.rss == 0 {
		return m, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
	}
	return m, nil
}

// loadAverage returns /proc/loadavg's first three fields.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// dropPageCache asks the kernel to drop the page cache of the file at
// path (posix_fadvise DONTNEED; only clean pages no process maps go), so
// that a process started from it next finds none of its pages cached.
// With the file on a block device without readahead, every file-backed
// page the process then maps is one it touched: the kernel's fault-around
// maps only neighbours already in the page cache.
func dropPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("drop the page cache of %s: %w", path, err)
	}
	return nil
}

// cachedPages returns how many of the file's pages are in the page cache
// (mincore over a mapping of it).
func cachedPages(path string) (cached, total int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0, 0, err
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Munmap(b)
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return 0, 0, fmt.Errorf("mincore %s: %w", path, errno)
	}
	for _, v := range vec {
		cached += int(v & 1)
	}
	return cached, len(vec), nil
}

package bridgeload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Mem is a process's resident memory from /proc/PID/status.
type Mem struct {
	RSS int64 // VmRSS, bytes
	HWM int64 // VmHWM (peak RSS), bytes
	// The parts of RSS (0 where the kernel does not report them): anonymous
	// memory (heap, stacks) and file-backed pages (mapped files such as a
	// store's memory-mapped logs, which the kernel can drop and reread).
	Anon, File int64
}

// ReadMem reads VmRSS and VmHWM of pid (Linux only).
func ReadMem(pid int) (Mem, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Mem{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	defer f.Close()
	return parseStatus(f)
}

// parseStatus reads the VmRSS and VmHWM lines ("VmRSS:   1234 kB").
func parseStatus(r io.Reader) (Mem, error) {
	var m Mem
	var seen int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM" && k != "RssAnon" && k != "RssFile") {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return Mem{}, fmt.Errorf("unexpected %s line %q", k, sc.Text())
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return Mem{}, fmt.Errorf("%s: %w", k, err)
		}
		switch k {
		case "VmRSS":
			m.RSS = n << 10
			seen++
		case "VmHWM":
			m.HWM = n << 10
			seen++
		case "RssAnon":
			m.Anon = n << 10
		case "RssFile":
			m.File = n << 10
		}
	}
	if err := sc.Err(); err != nil {
		return Mem{}, err
	}
	if seen != 2 {
		return Mem{}, errors.New("no VmRSS/VmHWM lines")
	}
	return m, nil
}

// clockTick is USER_HZ, the unit of /proc/PID/stat CPU times (100 on every
// Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// ReadCPU is the CPU time (user + system) process pid has used, from
// /proc/PID/stat (10 ms resolution).
func ReadCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
	}
	return parseStat(string(b))
}

// parseStat reads utime and stime (fields 14 and 15; the command name in
// field 2 may hold spaces and parentheses, so count from its closing one).
func parseStat(s string) (time.Duration, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("stat: no command name")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, errors.New("stat: too few fields")
	}
	var ticks int64
	for _, x := range f[11:13] {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// MiB formats bytes as MiB.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Proc is a child bridge process (the load tool re-executing itself in its
// bridge mode), so its memory is the bridge's alone.
type Proc struct {
	URL   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan error
}

// StartProc runs exe with args and this process's environment plus env
// ("K=V"); the child prints "bridge: URL" on stdout when it serves, and exits
// when its stdin closes (also if this process dies).
func StartProc(ctx context.Context, exe string, env []string, args ...string) (*Proc, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("child stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("child stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	p := &Proc{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "bridge: "); ok {
				urlc <- u
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		p.done <- cmd.Wait()
	}()
	select {
	case p.URL = <-urlc:
		return p, nil
	case err := <-p.done:
		return nil, fmt.Errorf("child bridge exited before serving: %v", err)
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("child bridge did not start: %w", ctx.Err())
	}
}

// Pid is the child's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Stop closes the child's stdin (it shuts down gracefully) and waits; after
// timeout it kills it.
func (p *Proc) Stop(timeout time.Duration) error {
	_ = p.stdin.Close()
	select {
	case err := <-p.done:
		if err != nil {
			return fmt.Errorf("child bridge: %w", err)
		}
		return nil
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("child bridge did not stop within %s; killed", timeout)
	}
}

// fdLimitNote describes the open-file limit for the report.
func fdLimitNote(cur, max uint64) string {
	return fmt.Sprintf("RLIMIT_NOFILE %d (hard %d)", cur, max)
}

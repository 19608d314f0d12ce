package stats

import (
	"context"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// CadvisorSource is a stats provider that also gives cadvisor's metrics, as
// the kubelet serves them on /metrics/cadvisor. [CRI] is one; the server
// serves /metrics/cadvisor only for a provider that is.
type CadvisorSource interface {
	// ReadCadvisorMetrics reads the node and its pods once. It does not
	// fail: what cannot be read is left out and container_scrape_error is
	// 1.
	ReadCadvisorMetrics(ctx context.Context) *CadvisorMetrics
}

var _ CadvisorSource = (*CRI)(nil)

// cadvisorLabels are the labels of every container_* series, as the
// kubelet's cadvisor endpoint keeps them: the cgroup (id), the runtime's
// name for it (name: the container ID with containerd), the image, and the
// pod's name, namespace and container name.
var cadvisorLabels = []string{"container", "id", "image", "name", "namespace", "pod"}

func cadvisorDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(append([]string{}, cadvisorLabels...), extra...), nil)
}

// cadvisor's metric names and help texts, for what nodekit measures.
var (
	cadvisorCPU        = cadvisorDesc("container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.", "cpu")
	cadvisorWorkingSet = cadvisorDesc("container_memory_working_set_bytes", "Current working set in bytes.")
	cadvisorUsage      = cadvisorDesc("container_memory_usage_bytes", "Current memory usage in bytes, including all memory regardless of when it was accessed")
	cadvisorRSS        = cadvisorDesc("container_memory_rss", "Size of RSS in bytes.")
	cadvisorFsUsage    = cadvisorDesc("container_fs_usage_bytes", "Number of bytes that are consumed by the container on this filesystem.", "device")
	cadvisorRxBytes    = cadvisorDesc("container_network_receive_bytes_total", "Cumulative count of bytes received", "interface")
	cadvisorRxErrors   = cadvisorDesc("container_network_receive_errors_total", "Cumulative count of errors encountered while receiving", "interface")
	cadvisorTxBytes    = cadvisorDesc("container_network_transmit_bytes_total", "Cumulative count of bytes transmitted", "interface")
	cadvisorTxErrors   = cadvisorDesc("container_network_transmit_errors_total", "Cumulative count of errors encountered while transmitting", "interface")
	cadvisorQuota      = cadvisorDesc("container_spec_cpu_quota", "CPU quota of the container.")
	cadvisorPeriod     = cadvisorDesc("container_spec_cpu_period", "CPU period of the container.")
	cadvisorShares     = cadvisorDesc("container_spec_cpu_shares", "CPU share of the container.")
	cadvisorMemLimit   = cadvisorDesc("container_spec_memory_limit_bytes", "Memory limit for the container.")
	cadvisorStart      = cadvisorDesc("container_start_time_seconds", "Start time of the container since unix epoch in seconds.")
	cadvisorBlkio      = cadvisorDesc("container_blkio_device_usage_total", "Blkio Device bytes usage", "device", "major", "minor", "operation")
	cadvisorScrapeErr  = prometheus.NewDesc("container_scrape_error", "1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
	machineLabels      = []string{"boot_id", "machine_id", "system_uuid"}
	machineCores       = prometheus.NewDesc("machine_cpu_cores", "Number of logical CPU cores.", machineLabels, nil)
	machineMemory      = prometheus.NewDesc("machine_memory_bytes", "Amount of memory installed on the machine.", machineLabels, nil)
)

var cadvisorDescs = []*prometheus.Desc{
	cadvisorCPU, cadvisorWorkingSet, cadvisorUsage, cadvisorRSS, cadvisorFsUsage, cadvisorRxBytes, cadvisorRxErrors,
	cadvisorTxBytes, cadvisorTxErrors, cadvisorBlkio, cadvisorQuota, cadvisorPeriod, cadvisorShares, cadvisorMemLimit, cadvisorStart,
	cadvisorScrapeErr, machineCores, machineMemory,
}

// CadvisorMetrics is one reading of cadvisor's metrics, as a
// prometheus.Collector to register on a registry of its own (one per
// request).
type CadvisorMetrics struct {
	metrics []prometheus.Metric
}

var _ prometheus.Collector = (*CadvisorMetrics)(nil)

// Describe implements prometheus.Collector.
func (cm *CadvisorMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range cadvisorDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (cm *CadvisorMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, m := range cm.metrics {
		ch <- m
	}
}

// ReadCadvisorMetrics implements CadvisorSource. It gives series for the
// root cgroup (id "/": the node's CPU, memory, block I/O and interfaces),
// each pod (container "", id its cgroup: CPU, memory, block I/O, the
// interfaces of its own network namespace, its cgroup's limits) and each container (CPU,
// memory, writable layer, start time, its cgroup's limits), and the
// machine's cores and memory. Container names are the runtime's; the
// sandbox (pause) container, which CRI does not list, has no series.
func (p *CRI) ReadCadvisorMetrics(ctx context.Context) *CadvisorMetrics {
	cm := &CadvisorMetrics{}
	failed := 0.0
	m := p.host.machine()
	ml := []string{m.bootID, m.machineID, m.systemID}
	cm.add(machineCores, prometheus.GaugeValue, time.Time{}, float64(m.cores), ml...)
	cm.add(machineMemory, prometheus.GaugeValue, time.Time{}, float64(m.memory), ml...)
	now := p.clk.Now()
	root := []string{"", "/", "", "", "", ""}
	if cg, _, err := p.host.nodeCgroup(); err != nil {
		p.log.V(2).Info("no node stats for the cadvisor metrics", "err", err.Error())
		failed = 1
	} else {
		cm.cgroup(p, now, cg, root)
	}
	if n, err := p.host.network(now); err == nil {
		cm.network(n, root)
	}
	pods, err := p.listPods(ctx, false)
	if err != nil {
		p.log.V(2).Info("no pod stats for the cadvisor metrics", "err", err.Error())
		failed = 1
	}
	mounts := p.host.readMounts()
	for _, in := range pods {
		cm.pod(p, in, mounts)
	}
	cm.add(cadvisorScrapeErr, prometheus.GaugeValue, time.Time{}, failed)
	return cm
}

// pod adds one pod's series and its containers'.
func (cm *CadvisorMetrics) pod(p *CRI, in *podInput, mounts mountDevices) {
	ps := in.result
	ref := ps.PodRef
	labels := []string{"", in.cgroup, "", "", ref.Namespace, ref.Name}
	cm.usage(ps.CPU, ps.Memory, labels)
	if in.cg != nil {
		cm.blkio(p, time.Time{}, in.cg.io, labels)
	}
	cm.network(ps.Network, labels)
	cm.startTime(ps.StartTime.Time, labels)
	if in.cgroup != "" {
		cm.spec(p.cgroups.spec(in.cgroup), labels)
	}
	byName := map[string]int{}
	for i, c := range ps.Containers {
		byName[c.Name] = i
	}
	for _, c := range in.containers {
		i, ok := byName[c.GetMetadata().GetName()]
		if !ok {
			continue
		}
		cs := ps.Containers[i]
		id := ""
		if in.cgroup != "" {
			id = filepath.Join(in.cgroup, c.GetId())
		}
		labels := []string{cs.Name, id, c.GetImage().GetImage(), c.GetId(), ref.Namespace, ref.Name}
		cm.usage(cs.CPU, cs.Memory, labels)
		cm.startTime(cs.StartTime.Time, labels)
		if fs := cs.Rootfs; fs != nil && fs.UsedBytes != nil {
			cm.add(cadvisorFsUsage, prometheus.GaugeValue, fs.Time.Time, float64(*fs.UsedBytes),
				append(labels, mounts.deviceOf(in.mounts[c.GetId()]))...)
		}
		if id != "" && c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			cm.spec(p.cgroups.spec(id), labels)
		}
	}
}

// usage adds the CPU and memory series of one cgroup.
func (cm *CadvisorMetrics) usage(cpu *statsapi.CPUStats, mem *statsapi.MemoryStats, labels []string) {
	if cpu != nil && cpu.UsageCoreNanoSeconds != nil {
		cm.add(cadvisorCPU, prometheus.CounterValue, cpu.Time.Time, float64(*cpu.UsageCoreNanoSeconds)/1e9, append(labels, "total")...)
	}
	if mem == nil {
		return
	}
	for _, f := range []struct {
		d *prometheus.Desc
		v *uint64
	}{{cadvisorWorkingSet, mem.WorkingSetBytes}, {cadvisorUsage, mem.UsageBytes}, {cadvisorRSS, mem.RSSBytes}} {
		if f.v != nil {
			cm.add(f.d, prometheus.GaugeValue, mem.Time.Time, float64(*f.v), labels...)
		}
	}
}

// cgroup adds the CPU, memory and block I/O series of a cgroup reading.
func (cm *CadvisorMetrics) cgroup(p *CRI, now time.Time, cg cgroupStats, labels []string) {
	cm.add(cadvisorCPU, prometheus.CounterValue, now, float64(cg.cpuUsageNanos)/1e9, append(labels, "total")...)
	cm.add(cadvisorWorkingSet, prometheus.GaugeValue, now, float64(cg.workingSet), labels...)
	cm.add(cadvisorUsage, prometheus.GaugeValue, now, float64(cg.memUsage), labels...)
	cm.add(cadvisorRSS, prometheus.GaugeValue, now, float64(cg.rss), labels...)
	cm.blkio(p, now, cg.io, labels)
}

// blkio adds the bytes read and written per device (cgroup v2 io.stat).
func (cm *CadvisorMetrics) blkio(p *CRI, at time.Time, io []ioDeviceStats, labels []string) {
	for _, d := range io {
		maj, min := strconv.FormatUint(d.major, 10), strconv.FormatUint(d.minor, 10)
		l := append(append([]string{}, labels...), p.host.blockDevice(d.major, d.minor), maj, min)
		cm.add(cadvisorBlkio, prometheus.CounterValue, at, float64(d.rbytes), append(l, "Read")...)
		cm.add(cadvisorBlkio, prometheus.CounterValue, at, float64(d.wbytes), append(l, "Write")...)
	}
}

// network adds the counters of each interface.
func (cm *CadvisorMetrics) network(n *statsapi.NetworkStats, labels []string) {
	if n == nil {
		return
	}
	ifaces := n.Interfaces
	if len(ifaces) == 0 && n.Name != "" {
		ifaces = []statsapi.InterfaceStats{n.InterfaceStats}
	}
	for _, i := range ifaces {
		l := append(append([]string{}, labels...), i.Name)
		for _, f := range []struct {
			d *prometheus.Desc
			v *uint64
		}{{cadvisorRxBytes, i.RxBytes}, {cadvisorRxErrors, i.RxErrors}, {cadvisorTxBytes, i.TxBytes}, {cadvisorTxErrors, i.TxErrors}} {
			if f.v != nil {
				cm.add(f.d, prometheus.CounterValue, n.Time.Time, float64(*f.v), l...)
			}
		}
	}
}

// spec adds the limit series as cadvisor does: quota and period only when
// set, shares with any CPU controller, the memory limit (0 unlimited) with
// a memory controller.
func (cm *CadvisorMetrics) spec(s cgroupSpec, labels []string) {
	if s.quota != 0 {
		cm.add(cadvisorQuota, prometheus.GaugeValue, time.Time{}, float64(s.quota), labels...)
	}
	if s.period != 0 {
		cm.add(cadvisorPeriod, prometheus.GaugeValue, time.Time{}, float64(s.period), labels...)
	}
	if s.hasCPU {
		cm.add(cadvisorShares, prometheus.GaugeValue, time.Time{}, float64(s.shares), labels...)
	}
	if s.hasMemory {
		cm.add(cadvisorMemLimit, prometheus.GaugeValue, time.Time{}, float64(s.memoryLimit), labels...)
	}
}

func (cm *CadvisorMetrics) startTime(t time.Time, labels []string) {
	if t.Unix() > 0 {
		cm.add(cadvisorStart, prometheus.GaugeValue, time.Time{}, float64(t.UnixNano())/1e9, labels...)
	}
}

// add appends one sample, stamped with at when it is set (as cadvisor
// stamps usage samples with their reading's time).
func (cm *CadvisorMetrics) add(d *prometheus.Desc, t prometheus.ValueType, at time.Time, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		return
	}
	if !at.IsZero() && at.Unix() > 0 {
		m = prometheus.NewMetricWithTimestamp(at, m)
	}
	cm.metrics = append(cm.metrics, m)
}

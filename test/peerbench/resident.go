package main

import (
	"bufio"
	"debug/buildinfo"
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// residentPages is how much of its binary's file a process has resident
// (its file-backed pages of the executable), by ELF section and, for
// .text, by Go module.
type residentPages struct {
	// sections are the resident bytes of each section; section holds
	// each section's size.
	sections, section map[string]uint64
	// text are the bytes of the functions on resident .text pages, by
	// module; linked are all its functions' bytes, by module.
	text, linked map[string]uint64
	// rodata and rodataLinked are the same for the symbols of .rodata
	// (type descriptors by their type's module), when the binary has a
	// symbol table (the kubelet's is stripped).
	rodata, rodataLinked map[string]uint64
}

// binaryInfo is what residentOf needs of a binary: its sections and its
// functions (from .gopclntab, so a stripped binary has them too) with the
// module of each.
type binaryInfo struct {
	sections []*elf.Section
	funcs    []fn // by entry
	rodata   []fn // the .rodata symbols, by address (none when stripped)
}

type fn struct {
	entry, end uint64
	module     string
}

// readBinary reads the sections, functions and modules of a Go binary.
func readBinary(path string) (*binaryInfo, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	text, pcln := f.Section(".text"), f.Section(".gopclntab")
	if text == nil || pcln == nil {
		return nil, fmt.Errorf("%s: no .text or .gopclntab", path)
	}
	data, err := pcln.Data()
	if err != nil {
		return nil, err
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil, fmt.Errorf("%s: function table: %w", path, err)
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, err
	}
	modules := []string{bi.Main.Path}
	for _, d := range bi.Deps {
		modules = append(modules, d.Path)
	}
	// Longest first: k8s.io/apiserver before k8s.io/api.
	slices.SortFunc(modules, func(a, b string) int { return len(b) - len(a) })
	info := &binaryInfo{}
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type == elf.SHT_PROGBITS {
			info.sections = append(info.sections, s)
		}
	}
	for _, g := range tab.Funcs {
		info.funcs = append(info.funcs, fn{entry: g.Entry, end: g.End, module: moduleOf(g.Name, modules, bi.Main.Path)})
	}
	slices.SortFunc(info.funcs, func(a, b fn) int { return cmpU64(a.entry, b.entry) })
	if ro := f.Section(".rodata"); ro != nil {
		syms, _ := f.Symbols() // a stripped binary has none
		for _, sym := range syms {
			if sym.Size > 0 && sym.Value >= ro.Addr && sym.Value < ro.Addr+ro.Size {
				info.rodata = append(info.rodata, fn{entry: sym.Value, end: sym.Value + sym.Size, module: rodataModuleOf(sym.Name, modules, bi.Main.Path)})
			}
		}
		slices.SortFunc(info.rodata, func(a, b fn) int { return cmpU64(a.entry, b.entry) })
	}
	return info, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// moduleOf is the module of the function named name: the longest module
// path that prefixes it, "std" for the standard library and the runtime's
// generated code.
func moduleOf(name string, modules []string, main string) string {
	for _, p := range []string{"type:.eq.", "type:.hash.", "go:"} {
		name = strings.TrimPrefix(name, p)
	}
	if strings.HasPrefix(name, "main.") {
		return main
	}
	for _, m := range modules {
		if strings.HasPrefix(name, m) && len(name) > len(m) && (name[len(m)] == '/' || name[len(m)] == '.') {
			return m
		}
	}
	return "std"
}

// rodataModuleOf is the module of a .rodata symbol: a type descriptor's
// (type:*k8s.io/api/core/v1.Pod) is its type's module; the linker's
// merged strings and tables are "strings and tables".
func rodataModuleOf(name string, modules []string, main string) string {
	if t, ok := strings.CutPrefix(name, "type:"); ok && !strings.HasPrefix(t, ".") {
		return moduleOf(strings.TrimLeft(t, "*[]"), modules, main)
	}
	if strings.HasPrefix(name, "go:") || strings.HasPrefix(name, "type:") || strings.HasPrefix(name, "runtime.") {
		return "strings and tables"
	}
	return moduleOf(name, modules, main)
}

// residentOf reads which pages of binary's file pid has resident, from
// /proc/PID/maps and /proc/PID/pagemap.
func residentOf(pid int, path string, info *binaryInfo) (residentPages, error) {
	r := residentPages{sections: map[string]uint64{}, section: map[string]uint64{}, text: map[string]uint64{}, linked: map[string]uint64{},
		rodata: map[string]uint64{}, rodataLinked: map[string]uint64{}}
	for _, s := range info.sections {
		r.section[s.Name] = s.Size
	}
	for _, f := range info.funcs {
		r.linked[f.module] += f.end - f.entry
	}
	for _, f := range info.rodata {
		r.rodataLinked[f.module] += f.end - f.entry
	}
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return r, err
	}
	defer maps.Close()
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return r, err
	}
	defer pm.Close()
	page := uint64(os.Getpagesize())
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[5] != path {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil {
			return r, fmt.Errorf("/proc/%d/maps: %q", pid, sc.Text())
		}
		entries := make([]byte, (end-start)/page*8)
		if _, err := pm.ReadAt(entries, int64(start/page*8)); err != nil && err != io.EOF {
			return r, fmt.Errorf("/proc/%d/pagemap: %w", pid, err)
		}
		for i := uint64(0); i < (end-start)/page; i++ {
			e := binary.LittleEndian.Uint64(entries[i*8:])
			// Bit 63: present; bit 61: a file page (a written page of
			// .data is anonymous, counted in RssAnon).
			if e&(1<<63) == 0 || e&(1<<61) == 0 {
				continue
			}
			r.add(info, off+i*page, page)
		}
	}
	return r, sc.Err()
}

// add counts the resident page at file offset off.
func (r *residentPages) add(info *binaryInfo, off, page uint64) {
	for _, s := range info.sections {
		if off+page <= s.Offset || off >= s.Offset+s.Size {
			continue
		}
		lo, hi := max(off, s.Offset), min(off+page, s.Offset+s.Size)
		r.sections[s.Name] += hi - lo
		vlo, vhi := s.Addr+(lo-s.Offset), s.Addr+(hi-s.Offset)
		switch s.Name {
		case ".text":
			attribute(info.funcs, vlo, vhi, r.text)
		case ".rodata":
			attribute(info.rodata, vlo, vhi, r.rodata)
		}
	}
}

// attribute adds to by, per module, the bytes of syms (sorted, not
// overlapping) within [lo, hi).
func attribute(syms []fn, lo, hi uint64, by map[string]uint64) {
	i, _ := slices.BinarySearchFunc(syms, lo, func(f fn, a uint64) int { return cmpU64(f.entry, a) })
	if i > 0 {
		i--
	}
	for ; i < len(syms) && syms[i].entry < hi; i++ {
		if b, e := max(syms[i].entry, lo), min(syms[i].end, hi); e > b {
			by[syms[i].module] += e - b
		}
	}
}

// write prints the resident sections and the modules with the most
// resident code.
func (r residentPages) write(w io.Writer, top int) {
	var names []string
	for n := range r.sections {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmpU64(r.sections[b], r.sections[a]) })
	var parts []string
	var total uint64
	for _, n := range names {
		total += r.sections[n]
		parts = append(parts, fmt.Sprintf("%s %.1f of %.1f", n, mib(r.sections[n]), mib(r.section[n])))
	}
	fmt.Fprintf(w, "resident pages of the binary: %.1f MiB (%s MiB)\n\n", mib(total), strings.Join(parts, ", "))
	writeModules(w, ".text", r.text, r.linked, top)
	// Go's linker names few .rodata symbols (the type descriptors and
	// strings are in a few large unnamed runs): the table is only worth
	// printing when its symbols cover most of the section.
	var named uint64
	for _, b := range r.rodataLinked {
		named += b
	}
	if named > r.section[".rodata"]/2 {
		fmt.Fprintln(w)
		writeModules(w, ".rodata", r.rodata, r.rodataLinked, top)
	}
}

// writeModules prints the top modules by resident bytes of one section.
func writeModules(w io.Writer, section string, resident, linked map[string]uint64, top int) {
	var mods []string
	for m := range linked {
		mods = append(mods, m)
	}
	slices.SortFunc(mods, func(a, b string) int { return cmpU64(resident[b], resident[a]) })
	fmt.Fprintf(w, "| module | resident %s (MiB) | linked %s (MiB) |\n", section, section)
	fmt.Fprintln(w, "|---|---:|---:|")
	var rest, restLinked uint64
	for i, m := range mods {
		if i >= top {
			rest += resident[m]
			restLinked += linked[m]
			continue
		}
		fmt.Fprintf(w, "| %s | %.2f | %.2f |\n", m, mib(resident[m]), mib(linked[m]))
	}
	if rest+restLinked > 0 {
		fmt.Fprintf(w, "| %d other modules | %.2f | %.2f |\n", len(mods)-top, mib(rest), mib(restLinked))
	}
}

package main

import (
	"debug/elf"
	"fmt"
	"os"
)

// binarySections are the sizes of an agent binary and of the ELF sections
// that make up most of its file-backed memory when mapped.
type binarySections struct {
	file, text, rodata, pclntab uint64
}

// sectionsOf reads the section sizes of the ELF binary at path.
func sectionsOf(path string) (binarySections, error) {
	var b binarySections
	st, err := os.Stat(path)
	if err != nil {
		return b, err
	}
	b.file = uint64(st.Size())
	f, err := elf.Open(path)
	if err != nil {
		return b, err
	}
	defer f.Close()
	for name, dst := range map[string]*uint64{".text": &b.text, ".rodata": &b.rodata, ".gopclntab": &b.pclntab} {
		if s := f.Section(name); s != nil {
			*dst = s.Size
		}
	}
	return b, nil
}

func (b binarySections) String() string {
	return fmt.Sprintf("%.1f MiB file, .text %.1f MiB, .rodata %.1f MiB, .gopclntab %.1f MiB",
		mib(b.file), mib(b.text), mib(b.rodata), mib(b.pclntab))
}

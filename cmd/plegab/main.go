package main

import (
	"os"

	"github.com/nodekit/nodekit/abtest"
)

func main() {
	h := abtest.New()
	h.Name = "plegab"
	os.Exit(h.Main(os.Args[1:]))
}

package nodeip_test

import (
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/nodeip"
)

func ExampleDetector() {
	d := nodeip.NewDetector(nil, clock.RealClock{}, logr.Discard(), nodeip.Config{NodeIPs: []string{"192.0.2.10"}})
	ips, err := d.NodeIPs()
	fmt.Println(ips, err)
	// Output: [192.0.2.10] <nil>
}

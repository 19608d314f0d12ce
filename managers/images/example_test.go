package images_test

import (
	"fmt"

	"github.com/nodekit/nodekit/managers/images"
)

// ExampleConfig_Validate shows the kubelet's threshold rule.
func ExampleConfig_Validate() {
	fmt.Println(images.Config{}.Validate())
	fmt.Println(images.Config{HighThresholdPercent: 70, LowThresholdPercent: 75}.Validate())
	// Output:
	// <nil>
	// imageGC lowThresholdPercent 75: must be less than highThresholdPercent 70
}

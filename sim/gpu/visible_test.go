package gpu

import (
	"reflect"
	"testing"
)

// TestVisibleDevices: CUDA_VISIBLE_DEVICES read as CUDA reads it, on a host
// of eight GPUs: indices or UUIDs in the order written, up to the first
// entry that names no GPU of the host or repeats one.
func TestVisibleDevices(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want []int
		set  bool
	}{
		{"", nil, false},
		{"2,3", []int{2, 3}, true},
		{"3,2", []int{3, 2}, true},
		{" 4, 5 ", []int{4, 5}, true},
		{"0,9,1", []int{0}, true},
		{"1,1,2", []int{1}, true},
		{"-1", []int{}, true},
		{"NoDevFiles", []int{}, true},
		{GPUUUID(5) + ",0", []int{5, 0}, true},
	} {
		got, set := VisibleDevices(tt.v, 8)
		if set != tt.set || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: %v (set %v), want %v (set %v)", tt.v, got, set, tt.want, tt.set)
		}
	}

}

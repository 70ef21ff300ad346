package sim

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back the records array with transparent
// huge pages (where /sys/kernel/mm/transparent_hugepage/enabled is
// "madvise" or "always"). The array is reserved whole at the start and
// written one record at a time as jobs finish; with 4 KiB pages each of
// its pages costs two faults (the collector's scan reads it untouched,
// then the first record written into it), about 100,000 faults for a
// million records, a tenth of the run's CPU on a virtual machine. It
// changes nothing but the cost: a refusal is ignored.
func adviseHuge(all []JobRecord) {
	const huge = 2 << 20
	size := uintptr(len(all)) * unsafe.Sizeof(JobRecord{})
	if size < 2*huge {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(all)))
	// Only the whole huge pages inside the array: the advice never
	// reaches memory the array does not own.
	lo := (start + huge - 1) &^ (huge - 1)
	hi := (start + size) &^ (huge - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(all)), lo-start)), hi-lo)
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}

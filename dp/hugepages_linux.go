package dp

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on Linux amd64 and arm64.
const hugePage = 2 << 20

// adviseHuge asks Linux to back x with transparent huge pages (madvise(MADV_HUGEPAGE)) where
// the system allows it on request ("madvise" mode, the common default). It must be called
// before x is first written, while its pages are not yet mapped. Only the whole huge pages
// inside x are advised; an error (an old kernel, THP disabled) is ignored: x works either way.
func adviseHuge(x []float64) {
	if len(x)*8 < 4*hugePage {
		return
	}
	lo := uintptr(unsafe.Pointer(&x[0]))
	hi := lo + uintptr(len(x))*8
	a, b := (lo+hugePage-1)&^(hugePage-1), hi&^(hugePage-1)
	if b <= a {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&x[0]), a-lo)), b-a), syscall.MADV_HUGEPAGE)
}

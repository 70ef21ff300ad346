package traces

import (
	"strconv"
	"unsafe"
)

// nameArena keeps the job names a reader makes (copies of a row's name,
// or numbered ones such as philly-17) in shared blocks, not one
// allocation each: a name is a string over bytes of a block that are
// never written again (a block is only appended to, and a full one is
// left for a new one), so it stays valid and unchanged for as long as it
// is referred to. A block lives while any of its names does.
type nameArena struct {
	buf []byte
}

// arenaBlock is the size of a block; a name longer than a quarter of it
// gets its own.
const arenaBlock = 32 << 10

// room makes room for n more bytes in the current block.
func (a *nameArena) room(n int) {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(arenaBlock, n))
	}
}

// take is the string of the bytes appended since start.
func (a *nameArena) take(start int) string {
	b := a.buf[start:]
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// clone is a copy of v (a view of a read buffer) that the arena keeps.
func (a *nameArena) clone(v string) string {
	switch {
	case v == "":
		return ""
	case len(v) > arenaBlock/4:
		return string([]byte(v))
	}
	a.room(len(v))
	start := len(a.buf)
	a.buf = append(a.buf, v...)
	return a.take(start)
}

// numbered is prefix followed by n in decimal.
func (a *nameArena) numbered(prefix string, n int) string {
	a.room(len(prefix) + 20)
	start := len(a.buf)
	a.buf = append(a.buf, prefix...)
	a.buf = strconv.AppendInt(a.buf, int64(n), 10)
	return a.take(start)
}

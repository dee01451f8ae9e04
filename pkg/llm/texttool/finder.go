package texttool

import "strings"

// finder finds the next occurrence of a needle at or after a position,
// remembering answers so that a left-to-right scan stays linear.
type finder struct {
	src  string
	last map[string][2]int // needle -> {from, index}; index -1: none at or after from
}

func newFinder(src string) *finder {
	return &finder{src: src, last: map[string][2]int{}}
}

func (f *finder) next(needle string, from int) int {
	if from > len(f.src) {
		return -1
	}
	if l, ok := f.last[needle]; ok && from >= l[0] {
		if l[1] < 0 {
			return -1
		}
		if l[1] >= from {
			return l[1]
		}
	}
	i := strings.Index(f.src[from:], needle)
	if i >= 0 {
		i += from
	}
	f.last[needle] = [2]int{from, i}
	return i
}

package code

/*
#include <stdlib.h>

// From the tree-sitter library that go-tree-sitter compiles in.
extern void ts_set_allocator(
	void *(*new_malloc)(size_t),
	void *(*new_calloc)(size_t, size_t),
	void *(*new_realloc)(void *, size_t),
	void (*new_free)(void *));

static void fetch_ts_libc_allocator(void) {
	ts_set_allocator(malloc, calloc, realloc, free);
}
*/
import "C"

import "sync"

// libcAllocator points tree-sitter's allocations at libc directly.
// go-tree-sitter routes every malloc and free of the parser through an
// exported Go function (C → Go → C), which made parsing three times
// slower; its own functions call the same libc malloc, so memory from
// before and after the switch is freed alike.
var libcAllocator = sync.OnceFunc(func() { C.fetch_ts_libc_allocator() })

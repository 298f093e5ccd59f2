// ledger/internal/lmdb_check.h — a structural check of an LMDB 0.9 data file (data.mdb), read
// with pread() only, before LMDB maps it.
//
// LMDB trusts its file: it follows page numbers into its map without bounds, asserts on page
// types, and a page beyond the end of the file is a SIGBUS. So a damaged file crashes whoever
// walks it. check_file() validates everything LMDB's read paths can reach from the meta page
// LMDB will pick, so that a file it passes can be walked without a crash, and a file it
// refuses is named with the page, the byte offset and what is wrong. The format (Debian's
// liblmdb 0.9.24, lmdb.h and mdb.c) and the list of checks are in ledger/STORAGE.md.
//
// Cost: every branch and leaf page is read once (one pread each), and the 16-byte header of
// each overflow run; the data of overflow runs is not read, except the free list's. Memory: one
// page buffer per tree level (at most kMaxDepth) and one bit per page of the file.
//
// Thread safety: a pure function of the file; it opens its own descriptor.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "events/status.h"

namespace evl::lmdb_check {

// What a page of the file is, as the check found it.
enum class PageKind : uint8_t {
  kMeta,           // pages 0 and 1
  kBranch,         // a branch page of the main database or of a named one
  kLeaf,           // a leaf page of the main database or of a named one
  kOverflow,       // the first page of an overflow run (a value of its own pages)
  kOverflowMore,   // a further page of an overflow run (raw value bytes, no header)
  kFreeDb,         // a branch or leaf page of the free-list database
  kFree,           // a page the free list holds (unused bytes)
};

struct Summary {
  uint32_t page_size = 0;
  uint64_t pages = 0;        // last_pgno + 1 of the meta page LMDB picks
  uint64_t txnid = 0;        // that meta page's transaction
  uint64_t pages_read = 0;   // branch, leaf, meta and free-list pages read whole
};

// Called once for every page of [0, pages) after the check passed, in page order.
using PageVisitor = std::function<void(uint64_t pgno, PageKind kind)>;

// kCorrupt naming `path`, the page, its byte offset, what is wrong and the fix, when the file
// is damaged; kIo when it cannot be read; kNotFound when there is no file at `path`.
Result<Summary> check_file(const std::string& path, const PageVisitor& visit = {});

}  // namespace evl::lmdb_check

#include "ledger/internal/lmdb_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "events/bytes.h"

namespace evl::lmdb_check {

namespace {

// LMDB 0.9's on-disk layout (mdb.c of 0.9.24, 64-bit little-endian): every offset below is the
// one of a field of MDB_page, MDB_meta, MDB_db or MDB_node.
constexpr uint32_t kPageHeader = 16;  // pgno u64, pad u16, flags u16, lower u16, upper u16
constexpr uint32_t kFlagsAt = 10, kLowerAt = 12, kUpperAt = 14, kOverflowPagesAt = 12;
constexpr uint16_t kPageBranch = 0x01, kPageLeaf = 0x02, kPageOverflow = 0x04, kPageMeta = 0x08;
constexpr uint32_t kMetaAt = kPageHeader;  // MDB_meta follows the page header
constexpr uint32_t kMagicAt = kMetaAt, kVersionAt = kMetaAt + 4, kAddressAt = kMetaAt + 8;
constexpr uint32_t kMapSizeAt = kMetaAt + 16, kFreeDbAt = kMetaAt + 24, kMainDbAt = kMetaAt + 72;
constexpr uint32_t kLastPageAt = kMetaAt + 120, kTxnIdAt = kMetaAt + 128;
constexpr uint32_t kMetaEnd = kMetaAt + 136;
constexpr uint32_t kMagic = 0xBEEFC0DE, kDataVersion = 1;
constexpr size_t kDbRecord = 48;  // pad u32, flags u16, depth u16, 4 × u64 counts, root u64
constexpr uint32_t kNodeHeader = 8;  // lo u16, hi u16, flags u16, ksize u16
constexpr uint16_t kNodeBigData = 0x01, kNodeSubData = 0x02;
constexpr uint16_t kIntegerKey = 0x08;  // MDB_INTEGERKEY, the free list's key order
constexpr uint64_t kNoPage = ~uint64_t{0};  // P_INVALID: an empty database's root
constexpr uint32_t kMaxKey = 511;           // MDB_MAXKEYSIZE
constexpr int kMaxDepth = 32;               // CURSOR_STACK: LMDB walks no deeper
constexpr uint32_t kMinPageSize = 512, kMaxPageSize = 0x8000;  // MAX_PAGESIZE

constexpr const char* kFix =
    "restore the ledger directory from a backup or from a mirror of this log and verify that "
    "copy (LMDB's own tools, mdb_dump or mdb_copy, cannot repair a damaged file)";

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct DbRecord {
  uint32_t pad = 0;
  uint16_t flags = 0, depth = 0;
  uint64_t branch_pages = 0, leaf_pages = 0, overflow_pages = 0, entries = 0, root = kNoPage;
};

DbRecord read_db(const uint8_t* p) {
  return {load<uint32_t>(p),      load<uint16_t>(p + 4),  load<uint16_t>(p + 6),
          load<uint64_t>(p + 8),  load<uint64_t>(p + 16), load<uint64_t>(p + 24),
          load<uint64_t>(p + 32), load<uint64_t>(p + 40)};
}

struct Meta {
  uint64_t pgno = 0;
  uint16_t flags = 0;
  uint32_t magic = 0, version = 0;
  uint64_t address = 0, map_size = 0, last_page = 0, txnid = 0;
  DbRecord free_db, main_db;
};

Meta read_meta(const uint8_t* p) {
  Meta m;
  m.pgno = load<uint64_t>(p);
  m.flags = load<uint16_t>(p + kFlagsAt);
  m.magic = load<uint32_t>(p + kMagicAt);
  m.version = load<uint32_t>(p + kVersionAt);
  m.address = load<uint64_t>(p + kAddressAt);
  m.map_size = load<uint64_t>(p + kMapSizeAt);
  m.free_db = read_db(p + kFreeDbAt);
  m.main_db = read_db(p + kMainDbAt);
  m.last_page = load<uint64_t>(p + kLastPageAt);
  m.txnid = load<uint64_t>(p + kTxnIdAt);
  return m;
}

// Which tree a page belongs to: it decides the key order and what a leaf's values are.
enum class Tree { kFree, kMain, kNamed };

// Where a database's record lives (a meta page, or a node of the main database), for messages.
struct Site {
  uint64_t pgno = 0;
  uint64_t offset = 0;  // of the record in the file
};

struct Counts {
  uint64_t branch = 0, leaf = 0, overflow = 0, entries = 0;
};

// LMDB's key orders: mdb_cmp_memn (bytes, then length) for the main and the named databases,
// mdb_cmp_long (a native 8-byte integer) for the free list.
int compare(Tree tree, ByteView a, ByteView b) {
  if (tree == Tree::kFree) {
    uint64_t x = load<uint64_t>(a.data()), y = load<uint64_t>(b.data());
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const size_t n = std::min(a.size(), b.size());
  int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

std::string hex16(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

class Checker {
 public:
  Checker(std::string path, int fd, uint64_t file_size)
      : path_(std::move(path)), fd_(fd), file_size_(file_size) {}

  Result<Summary> run(const PageVisitor& visit);

 private:
  struct Extent {
    uint32_t at, size;
    bool operator<(const Extent& o) const { return at < o.at; }
  };
  struct Named {
    std::string name;
    DbRecord db;
    Site site;
  };

  Status damaged(uint64_t pgno, uint64_t offset, const std::string& what) const {
    return corrupt("the database file " + path_ + " is damaged at page " + std::to_string(pgno) +
                   " (byte offset " + std::to_string(offset) + "): " + what + "; " + kFix);
  }
  Status damaged_in(uint64_t pgno, uint64_t in_page, const std::string& what) const {
    return damaged(pgno, pgno * page_size_ + in_page, what);
  }
  Status read_at(uint64_t offset, uint8_t* out, size_t size, uint64_t pgno) const;
  Status read_metas();
  Status check_meta(int which, const Meta& m) const;
  Status check_meta_pair() const;
  Status check_older_free_list() const;
  Status mark(uint64_t pgno, PageKind kind, uint64_t from_pgno, uint64_t from_offset,
              const std::string& what);
  Status check_db_record(const DbRecord& db, Tree tree, const std::string& name,
                         const Site& site) const;
  Status walk_tree(const DbRecord& db, Tree tree, const std::string& name, const Site& site);
  Status walk(uint64_t pgno, int depth, int leaf_depth, Tree tree, const std::string& name,
              std::optional<ByteView> low, std::optional<ByteView> high, Counts& counts);
  Status check_nodes(uint64_t pgno, const uint8_t* page, bool leaf, Tree tree,
                     const std::string& name, std::vector<Extent>& extents) const;
  Status check_keys(uint64_t pgno, const uint8_t* page, bool leaf, Tree tree,
                    std::optional<ByteView> low, std::optional<ByteView> high) const;
  Status check_leaf_values(uint64_t pgno, const uint8_t* page, Tree tree,
                           const std::string& name, Counts& counts);
  Status check_overflow(uint64_t from_pgno, uint64_t node_offset, uint64_t first, uint32_t size,
                        bool free_list, const std::string& name, Counts& counts);
  Status check_free_record(uint64_t pgno, uint64_t value_offset, ByteView key, ByteView value);
  // kCorrupt when meta page `which`'s free list, whose newest record is of transaction
  // `newest`, does not belong to its transaction id.
  Status check_newest_free(int which, uint64_t newest) const;

  uint32_t keys(const uint8_t* page) const {
    return (load<uint16_t>(page + kLowerAt) - kPageHeader) / 2;
  }
  const uint8_t* node(const uint8_t* page, uint32_t i) const {
    return page + load<uint16_t>(page + kPageHeader + 2 * i);
  }

  std::string path_;
  int fd_;
  uint64_t file_size_;
  uint32_t page_size_ = 0;
  Meta metas_[2];
  int current_ = 0;
  uint64_t last_page_ = 0;
  std::vector<uint64_t> seen_;   // one bit per page of [0, last_page_]
  std::vector<uint8_t> kinds_;   // PageKind per page, only when a visitor wants them
  bool keep_kinds_ = false;
  std::vector<Bytes> pages_;     // one page buffer per tree level
  std::vector<std::vector<Extent>> extents_;  // one per tree level
  Bytes value_;                  // a free-list record read from its overflow pages
  std::vector<Named> named_;
  uint64_t newest_free_ = 0;     // the key of the current free list's last record
  uint64_t pages_read_ = 0;
};

Status Checker::read_at(uint64_t offset, uint8_t* out, size_t size, uint64_t pgno) const {
  for (size_t done = 0; done < size;) {
    ssize_t n = ::pread(fd_, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error("cannot read " + path_ + ": " + std::strerror(errno));
    if (n == 0) {
      return damaged(pgno, offset + done, "the file ends at byte " + std::to_string(file_size_) +
                                              ", inside the page (it was truncated)");
    }
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

Status Checker::check_meta(int which, const Meta& m) const {
  auto at = [&](uint32_t field, const std::string& what) {
    return damaged(which, uint64_t(which) * metas_[0].free_db.pad + field,
                   "meta page " + std::to_string(which) + " " + what);
  };
  if (m.pgno != uint64_t(which)) return at(0, "says it is page " + std::to_string(m.pgno));
  if (m.flags != kPageMeta) return at(kFlagsAt, "has page flags " + hex16(m.flags));
  if (m.magic != kMagic) return at(kMagicAt, "has magic " + hex16(m.magic) + ", not 0xbeefc0de");
  if (m.version != kDataVersion) {
    return at(kVersionAt, "has data version " + std::to_string(m.version) + ", not 1");
  }
  const uint32_t psize = m.free_db.pad;  // mm_psize
  if (psize < kMinPageSize || psize > kMaxPageSize || (psize & (psize - 1)) != 0 ||
      (which == 1 && psize != metas_[0].free_db.pad)) {
    return at(kFreeDbAt, "gives a page size of " + std::to_string(psize) +
                             " (a power of two from 512 to 32768, the same in both)");
  }
  if (m.address != 0) return at(kAddressAt, "gives a fixed map address " + hex16(m.address));
  if (m.last_page < 1 || m.last_page >= m.map_size / psize) {
    return at(kLastPageAt, "gives last page " + std::to_string(m.last_page) + " for a map of " +
                               std::to_string(m.map_size) + " bytes");
  }
  if (m.free_db.flags != kIntegerKey) {
    return at(kFreeDbAt + 4, "gives the free list flags " + hex16(m.free_db.flags));
  }
  if (m.main_db.flags != 0 || m.main_db.pad != 0) {
    return at(kMainDbAt, "gives the main database flags " + hex16(m.main_db.flags) +
                             " and pad " + std::to_string(m.main_db.pad));
  }
  return Status::ok();
}

Status Checker::check_meta_pair() const {
  // LMDB writes transaction t's meta into page t mod 2 and reads the one of the larger id
  // (mdb_env_pick_meta): the two are consecutive transactions, the newer in its own page.
  const Meta& cur = metas_[current_];
  const Meta& old = metas_[1 - current_];
  const bool fresh = cur.txnid == 0 && old.txnid == 0;
  if (!fresh && (old.txnid + 1 != cur.txnid || (cur.txnid & 1) != uint64_t(current_))) {
    return damaged(current_, uint64_t(current_) * page_size_ + kTxnIdAt,
                   "meta page 0 says transaction " + std::to_string(metas_[0].txnid) +
                       " and meta page 1 says " + std::to_string(metas_[1].txnid) +
                       ": they must be consecutive, the newer in page (transaction mod 2)");
  }
  if (old.last_page > cur.last_page) {
    return damaged(1 - current_, uint64_t(1 - current_) * page_size_ + kLastPageAt,
                   "the older meta page gives last page " + std::to_string(old.last_page) +
                       ", beyond the newer's " + std::to_string(cur.last_page));
  }
  const uint64_t needed = (cur.last_page + 1) * page_size_;
  if (file_size_ < needed) {
    return damaged(file_size_ / page_size_, file_size_,
                   "the file has " + std::to_string(file_size_) + " bytes but its meta page " +
                       std::to_string(current_) + " counts " + std::to_string(cur.last_page + 1) +
                       " pages of " + std::to_string(page_size_) + " (" + std::to_string(needed) +
                       " bytes): it was truncated");
  }
  return Status::ok();
}

Status Checker::read_metas() {
  uint8_t buf[kMetaEnd];
  if (file_size_ < kMetaEnd) {
    return damaged(0, file_size_, "the file has only " + std::to_string(file_size_) +
                                      " bytes, less than a meta page");
  }
  // As mdb_env_read_header: page 0 first, then page 1 at page 0's page size.
  EVL_RETURN_IF_ERROR(read_at(0, buf, sizeof buf, 0));
  metas_[0] = read_meta(buf);
  EVL_RETURN_IF_ERROR(check_meta(0, metas_[0]));
  page_size_ = metas_[0].free_db.pad;
  if (file_size_ < uint64_t(page_size_) + kMetaEnd) {
    return damaged(1, file_size_, "the file ends before meta page 1 (it was truncated)");
  }
  EVL_RETURN_IF_ERROR(read_at(page_size_, buf, sizeof buf, 1));
  metas_[1] = read_meta(buf);
  EVL_RETURN_IF_ERROR(check_meta(1, metas_[1]));
  current_ = metas_[0].txnid < metas_[1].txnid ? 1 : 0;
  return check_meta_pair();
}

Status Checker::mark(uint64_t pgno, PageKind kind, uint64_t from_pgno, uint64_t from_offset,
                     const std::string& what) {
  if (pgno < 2 || pgno > last_page_) {
    return damaged(from_pgno, from_offset,
                   what + " names page " + std::to_string(pgno) + ", outside pages 2 to " +
                       std::to_string(last_page_));
  }
  uint64_t& word = seen_[pgno / 64];
  const uint64_t bit = uint64_t{1} << (pgno % 64);
  if (word & bit) {
    return damaged(from_pgno, from_offset,
                   what + " names page " + std::to_string(pgno) +
                       ", which another reference already names (a cycle, or a damaged page "
                       "number)");
  }
  word |= bit;
  if (keep_kinds_) kinds_[pgno] = static_cast<uint8_t>(kind);
  return Status::ok();
}

Status Checker::check_db_record(const DbRecord& db, Tree tree, const std::string& name,
                                const Site& site) const {
  auto bad = [&](const std::string& what) {
    return damaged(site.pgno, site.offset, "the record of database '" + name + "' " + what);
  };
  const uint16_t flags = tree == Tree::kFree ? kIntegerKey : 0;
  if (db.flags != flags) return bad("has flags " + hex16(db.flags));
  if (tree == Tree::kNamed && db.pad != 0) return bad("has pad " + std::to_string(db.pad));
  if (db.root == kNoPage) {
    if (db.depth != 0 || db.branch_pages != 0 || db.leaf_pages != 0 || db.overflow_pages != 0 ||
        db.entries != 0) {
      return bad("has no root page but a depth of " + std::to_string(db.depth) + " and " +
                 std::to_string(db.entries) + " entries");
    }
    return Status::ok();
  }
  if (db.depth < 1 || db.depth > kMaxDepth) {
    return bad("gives a depth of " + std::to_string(db.depth) + " (1 to 32)");
  }
  return Status::ok();
}

Status Checker::walk_tree(const DbRecord& db, Tree tree, const std::string& name,
                          const Site& site) {
  EVL_RETURN_IF_ERROR(check_db_record(db, tree, name, site));
  if (db.root == kNoPage) return Status::ok();
  Counts counts;
  EVL_RETURN_IF_ERROR(mark(db.root, tree == Tree::kFree ? PageKind::kFreeDb : PageKind::kLeaf,
                           site.pgno, site.offset, "the root of database '" + name + "'"));
  EVL_RETURN_IF_ERROR(
      walk(db.root, 1, db.depth, tree, name, std::nullopt, std::nullopt, counts));
  if (counts.branch != db.branch_pages || counts.leaf != db.leaf_pages ||
      counts.overflow != db.overflow_pages || counts.entries != db.entries) {
    return damaged(site.pgno, site.offset,
                   "the record of database '" + name + "' counts " +
                       std::to_string(db.branch_pages) + " branch, " +
                       std::to_string(db.leaf_pages) + " leaf and " +
                       std::to_string(db.overflow_pages) + " overflow pages and " +
                       std::to_string(db.entries) + " entries; its tree has " +
                       std::to_string(counts.branch) + ", " + std::to_string(counts.leaf) +
                       ", " + std::to_string(counts.overflow) + " and " +
                       std::to_string(counts.entries));
  }
  return Status::ok();
}

// The page was marked by whoever named it (the database record or its parent).
Status Checker::walk(uint64_t pgno, int depth, int leaf_depth, Tree tree,
                     const std::string& name, std::optional<ByteView> low,
                     std::optional<ByteView> high, Counts& counts) {
  Bytes& page_buf = pages_[depth];
  const uint8_t* page = page_buf.data();
  EVL_RETURN_IF_ERROR(read_at(pgno * page_size_, page_buf.data(), page_size_, pgno));
  ++pages_read_;
  const bool leaf = depth == leaf_depth;
  const std::string where = "a page of database '" + name + "' at depth " + std::to_string(depth) +
                            " of " + std::to_string(leaf_depth);
  if (load<uint64_t>(page) != pgno) {
    return damaged_in(pgno, 0, where + " says it is page " + std::to_string(load<uint64_t>(page)));
  }
  const uint16_t flags = load<uint16_t>(page + kFlagsAt);
  if (flags != (leaf ? kPageLeaf : kPageBranch)) {
    return damaged_in(pgno, kFlagsAt, where + " has page flags " + hex16(flags) + " where a " +
                                          (leaf ? "leaf (0x2)" : "branch (0x1)") + " belongs");
  }
  if (keep_kinds_ && tree != Tree::kFree) {
    kinds_[pgno] = static_cast<uint8_t>(leaf ? PageKind::kLeaf : PageKind::kBranch);
  }
  EVL_RETURN_IF_ERROR(check_nodes(pgno, page, leaf, tree, name, extents_[depth]));
  EVL_RETURN_IF_ERROR(check_keys(pgno, page, leaf, tree, low, high));
  if (leaf) {
    counts.leaf++;
    return check_leaf_values(pgno, page, tree, name, counts);
  }
  counts.branch++;
  const uint32_t n = keys(page);
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t* child_node = node(page, i);
    // NODEPGNO: a branch node keeps its child's number in lo, hi and the flags word.
    const uint64_t child = load<uint16_t>(child_node) |
                           (uint64_t(load<uint16_t>(child_node + 2)) << 16) |
                           (uint64_t(load<uint16_t>(child_node + 4)) << 32);
    const PageKind kind = tree == Tree::kFree ? PageKind::kFreeDb
                          : depth + 1 == leaf_depth ? PageKind::kLeaf
                                                    : PageKind::kBranch;
    EVL_RETURN_IF_ERROR(mark(child, kind, pgno, pgno * page_size_ + (child_node - page),
                             "node " + std::to_string(i) + " of " + where));
    auto key_of = [&](uint32_t k) {
      const uint8_t* nd = node(page, k);
      return ByteView(nd + kNodeHeader, load<uint16_t>(nd + 6));
    };
    std::optional<ByteView> child_low = i == 0 ? low : std::optional<ByteView>(key_of(i));
    std::optional<ByteView> child_high =
        i + 1 == n ? high : std::optional<ByteView>(key_of(i + 1));
    EVL_RETURN_IF_ERROR(
        walk(child, depth + 1, leaf_depth, tree, name, child_low, child_high, counts));
  }
  return Status::ok();
}

Status Checker::check_nodes(uint64_t pgno, const uint8_t* page, bool leaf, Tree tree,
                            const std::string& name, std::vector<Extent>& extents) const {
  const uint16_t lower = load<uint16_t>(page + kLowerAt), upper = load<uint16_t>(page + kUpperAt);
  if (lower < kPageHeader || (lower & 1) != 0 || lower > upper || upper > page_size_) {
    return damaged_in(pgno, kLowerAt,
                      "a page of database '" + name + "' has free space from " +
                          std::to_string(lower) + " to " + std::to_string(upper) +
                          ", which does not fit a page of " + std::to_string(page_size_));
  }
  const uint32_t n = keys(page);
  // mdb_page_search_root asserts two keys in a branch of any database but the free list.
  const uint32_t least = leaf || tree == Tree::kFree ? 1 : 2;
  if (n < least) {
    return damaged_in(pgno, kLowerAt, "a " + std::string(leaf ? "leaf" : "branch") +
                                          " page of database '" + name + "' has " +
                                          std::to_string(n) + " keys");
  }
  extents.clear();
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t slot = kPageHeader + 2 * i;
    const uint32_t at = load<uint16_t>(page + slot);
    const std::string what = "node " + std::to_string(i) + " of a page of database '" + name + "'";
    if (at < upper || at + kNodeHeader > page_size_ || (at & 1) != 0) {
      return damaged_in(pgno, slot, what + " starts at " + std::to_string(at) +
                                        ", outside the page's nodes (" + std::to_string(upper) +
                                        " to " + std::to_string(page_size_) + ")");
    }
    const uint8_t* nd = page + at;
    const uint32_t key_size = load<uint16_t>(nd + 6);
    uint64_t size = kNodeHeader + key_size;
    if (leaf) {
      const uint16_t flags = load<uint16_t>(nd + 4);
      const uint16_t allowed = tree == Tree::kMain ? kNodeSubData : kNodeBigData;
      if ((flags & ~allowed) != 0 || (tree == Tree::kMain && flags != kNodeSubData)) {
        return damaged_in(pgno, at + 4, what + " has node flags " + hex16(flags));
      }
      const uint32_t data_size = load<uint16_t>(nd) | (uint32_t(load<uint16_t>(nd + 2)) << 16);
      size += (flags & kNodeBigData) ? 8 : data_size;
    }
    if (key_size > kMaxKey || at + size > page_size_) {
      return damaged_in(pgno, at, what + " (key of " + std::to_string(key_size) + " bytes, " +
                                      std::to_string(size) + " in all) runs past the page's end");
    }
    extents.push_back({at, static_cast<uint32_t>((size + 1) & ~uint64_t{1})});
  }
  // LMDB packs nodes from the page's end down to `upper` (mdb_node_add, mdb_node_del): they
  // tile [upper, page size) exactly, each rounded to an even size.
  std::sort(extents.begin(), extents.end());
  uint32_t expected = upper;
  for (const Extent& e : extents) {
    if (e.at != expected) {
      return damaged_in(pgno, e.at, "a node of database '" + name + "' starts at " +
                                        std::to_string(e.at) + " where the one before it ends at " +
                                        std::to_string(expected) + " (nodes overlap or leave a gap)");
    }
    expected = e.at + e.size;
  }
  if (expected != page_size_) {
    return damaged_in(pgno, expected, "the nodes of a page of database '" + name + "' end at " +
                                          std::to_string(expected) + ", not at the page's end");
  }
  return Status::ok();
}

Status Checker::check_keys(uint64_t pgno, const uint8_t* page, bool leaf, Tree tree,
                           std::optional<ByteView> low, std::optional<ByteView> high) const {
  const uint32_t n = keys(page);
  std::optional<ByteView> previous;
  // A branch's first key is never compared (mdb_node_search starts at 1): its child holds the
  // keys below the second.
  for (uint32_t i = leaf ? 0 : 1; i < n; ++i) {
    const uint8_t* nd = node(page, i);
    const ByteView key(nd + kNodeHeader, load<uint16_t>(nd + 6));
    const uint64_t at = nd - page + kNodeHeader;
    if (tree == Tree::kFree && key.size() != 8) {
      return damaged_in(pgno, at - 2, "a free-list key has " + std::to_string(key.size()) +
                                          " bytes, not 8");
    }
    if (previous && compare(tree, *previous, key) >= 0) {
      return damaged_in(pgno, at, "key " + std::to_string(i) + " of the page is not above the one "
                                  "before it");
    }
    // A separator is the smallest key of its child, so the child's keys are >= it and below
    // the next separator.
    if ((low && compare(tree, key, *low) < 0) || (high && compare(tree, key, *high) >= 0)) {
      return damaged_in(pgno, at, "key " + std::to_string(i) + " of the page is outside the range "
                                  "its parent's keys give the page");
    }
    previous = key;
  }
  return Status::ok();
}

Status Checker::check_leaf_values(uint64_t pgno, const uint8_t* page, Tree tree,
                                  const std::string& name, Counts& counts) {
  const uint32_t n = keys(page);
  counts.entries += n;
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t* nd = node(page, i);
    const uint64_t at = pgno * page_size_ + (nd - page);
    const uint16_t key_size = load<uint16_t>(nd + 6);
    const uint32_t data_size = load<uint16_t>(nd) | (uint32_t(load<uint16_t>(nd + 2)) << 16);
    const ByteView key(nd + kNodeHeader, key_size);
    const uint8_t* data = nd + kNodeHeader + key_size;
    if (tree == Tree::kMain) {
      // A named database: its MDB_db record is the value (mdb_dbi_open copies 48 bytes).
      if (data_size != kDbRecord) {
        return damaged(pgno, at, "the record of database '" +
                                     std::string(as_chars(key)) + "' has " +
                                     std::to_string(data_size) + " bytes, not 48");
      }
      named_.push_back({std::string(as_chars(key)), read_db(data),
                        Site{pgno, at + kNodeHeader + key_size}});
      continue;
    }
    if (load<uint16_t>(nd + 4) & kNodeBigData) {
      EVL_RETURN_IF_ERROR(check_overflow(pgno, at, load<uint64_t>(data), data_size,
                                         tree == Tree::kFree, name, counts));
      if (tree == Tree::kFree) {
        EVL_RETURN_IF_ERROR(check_free_record(load<uint64_t>(data), load<uint64_t>(data) *
                                              page_size_ + kPageHeader, key, value_));
      }
    } else if (tree == Tree::kFree) {
      EVL_RETURN_IF_ERROR(check_free_record(pgno, at + kNodeHeader + key_size, key,
                                            ByteView(data, data_size)));
    }
  }
  return Status::ok();
}

Status Checker::check_overflow(uint64_t from_pgno, uint64_t node_offset, uint64_t first,
                               uint32_t size, bool free_list, const std::string& name,
                               Counts& counts) {
  const std::string what = "a value of database '" + name + "'";
  EVL_RETURN_IF_ERROR(mark(first, PageKind::kOverflow, from_pgno, node_offset + kNodeHeader,
                           what + " on overflow pages"));
  uint8_t header[kPageHeader];
  EVL_RETURN_IF_ERROR(read_at(first * page_size_, header, sizeof header, first));
  if (load<uint64_t>(header) != first) {
    return damaged_in(first, 0, "an overflow page says it is page " +
                                    std::to_string(load<uint64_t>(header)));
  }
  if (load<uint16_t>(header + kFlagsAt) != kPageOverflow) {
    return damaged_in(first, kFlagsAt, "the first page of " + what + " has page flags " +
                                           hex16(load<uint16_t>(header + kFlagsAt)) +
                                           ", not an overflow page's (0x4)");
  }
  const uint64_t pages = load<uint32_t>(header + kOverflowPagesAt);
  const uint64_t needed = (kPageHeader - 1 + uint64_t{size}) / page_size_ + 1;  // OVPAGES
  if (pages < needed || pages > last_page_ + 1 - first) {
    return damaged_in(first, kOverflowPagesAt,
                      "an overflow run of " + std::to_string(pages) + " pages holds " + what +
                          " of " + std::to_string(size) + " bytes (it needs " +
                          std::to_string(needed) + ", within the last page " +
                          std::to_string(last_page_) + ")");
  }
  for (uint64_t p = first + 1; p < first + pages; ++p) {
    EVL_RETURN_IF_ERROR(mark(p, PageKind::kOverflowMore, first, first * page_size_ + 12,
                             "the overflow run of page " + std::to_string(first)));
  }
  counts.overflow += pages;
  if (free_list) {
    value_.resize(size);
    EVL_RETURN_IF_ERROR(read_at(first * page_size_ + kPageHeader, value_.data(), size, first));
  }
  return Status::ok();
}

Status Checker::check_free_record(uint64_t pgno, uint64_t value_offset, ByteView key,
                                  ByteView value) {
  // Key: the transaction that freed the pages (never after the meta page's own). Value: an
  // MDB_IDL, a count then that many page numbers; the record may be longer (reserved room).
  const uint64_t txn = load<uint64_t>(key.data());
  if (txn < 1 || txn > metas_[current_].txnid) {
    return damaged(pgno, value_offset - 8, "a free-list record is keyed by transaction " +
                                               std::to_string(txn) + ", after the file's " +
                                               std::to_string(metas_[current_].txnid));
  }
  if (value.size() < 8 || value.size() % 8 != 0 ||
      load<uint64_t>(value.data()) > value.size() / 8 - 1) {
    return damaged(pgno, value_offset, "the free-list record of transaction " +
                                           std::to_string(txn) + " has " +
                                           std::to_string(value.size()) +
                                           " bytes for its page count");
  }
  newest_free_ = txn;  // keys ascend (check_keys)
  const uint64_t count = load<uint64_t>(value.data());
  for (uint64_t j = 1; j <= count; ++j) {
    EVL_RETURN_IF_ERROR(mark(load<uint64_t>(value.data() + 8 * j), PageKind::kFree, pgno,
                             value_offset + 8 * j,
                             "the free-list record of transaction " + std::to_string(txn)));
  }
  return Status::ok();
}

Result<Summary> Checker::run(const PageVisitor& visit) {
  EVL_RETURN_IF_ERROR(read_metas());
  const Meta& meta = metas_[current_];
  last_page_ = meta.last_page;
  seen_.assign(last_page_ / 64 + 1, 0);
  seen_[0] |= 3;  // the meta pages
  keep_kinds_ = static_cast<bool>(visit);
  if (keep_kinds_) kinds_.assign(last_page_ + 1, 0xff);
  if (keep_kinds_) kinds_[0] = kinds_[1] = static_cast<uint8_t>(PageKind::kMeta);
  pages_.assign(kMaxDepth + 1, Bytes(page_size_));
  extents_.resize(kMaxDepth + 1);
  const uint64_t meta_at = uint64_t(current_) * page_size_;
  EVL_RETURN_IF_ERROR(check_older_free_list());
  EVL_RETURN_IF_ERROR(
      walk_tree(meta.free_db, Tree::kFree, "free list", Site{uint64_t(current_), meta_at + kFreeDbAt}));
  EVL_RETURN_IF_ERROR(
      walk_tree(meta.main_db, Tree::kMain, "main", Site{uint64_t(current_), meta_at + kMainDbAt}));
  if (meta.free_db.root != kNoPage) EVL_RETURN_IF_ERROR(check_newest_free(current_, newest_free_));
  for (size_t i = 0; i < named_.size(); ++i) {
    // named_ grows only while the main tree is walked: each is walked once, after it.
    const Named named = named_[i];
    EVL_RETURN_IF_ERROR(walk_tree(named.db, Tree::kNamed, named.name, named.site));
  }
  // LMDB's own audit (mdb_audit, MDB_DEBUG builds): the free pages and the pages of every tree
  // are all the pages there are, each once.
  for (uint64_t p = 2; p <= last_page_; ++p) {
    if (!(seen_[p / 64] & (uint64_t{1} << (p % 64)))) {
      return damaged_in(p, 0, "the page is in no database and not on the free list (a lost "
                              "page: a free-list record or a database count is damaged)");
    }
  }
  if (visit) {
    for (uint64_t p = 0; p <= last_page_; ++p) visit(p, static_cast<PageKind>(kinds_[p]));
  }
  return Summary{page_size_, last_page_ + 1, meta.txnid, pages_read_};
}

Status Checker::check_newest_free(int which, uint64_t newest) const {
  const uint64_t txnid = metas_[which].txnid;
  if (newest == txnid) return Status::ok();
  return damaged(which, uint64_t(which) * page_size_ + kTxnIdAt,
                 "meta page " + std::to_string(which) + " says transaction " +
                     std::to_string(txnid) + " but its free list's newest record is of "
                     "transaction " + std::to_string(newest) +
                     " (a damaged transaction id makes LMDB read another state than the last "
                     "one committed)");
}

Status Checker::check_older_free_list() const {
  // The newest free-list record of a state is the one of its own transaction (every commit
  // frees the pages it copied, under its id; they are reused two transactions later at the
  // earliest). For the older meta page this is what shows a damaged transaction id that made
  // LMDB pick the older state: its free list then holds a record from after it. Only its
  // rightmost path is read, with the bounds a walk needs.
  const Meta& old = metas_[1 - current_];
  uint64_t pgno = old.free_db.root;
  if (pgno == kNoPage) return Status::ok();
  Bytes page(page_size_);
  for (int depth = 1; depth <= kMaxDepth; ++depth) {
    if (pgno < 2 || pgno > old.last_page) break;  // the full walk of the newer one names it
    EVL_RETURN_IF_ERROR(read_at(pgno * page_size_, page.data(), page_size_, pgno));
    const uint16_t flags = load<uint16_t>(page.data() + kFlagsAt);
    const uint16_t lower = load<uint16_t>(page.data() + kLowerAt);
    if (load<uint64_t>(page.data()) != pgno || (flags != kPageLeaf && flags != kPageBranch) ||
        lower < kPageHeader + 2 || lower > page_size_) {
      break;
    }
    const uint32_t at = load<uint16_t>(page.data() + lower - 2);
    if (at + kNodeHeader + 8 > page_size_) break;
    const uint8_t* nd = page.data() + at;
    if (flags == kPageBranch) {
      pgno = load<uint16_t>(nd) | (uint64_t(load<uint16_t>(nd + 2)) << 16) |
             (uint64_t(load<uint16_t>(nd + 4)) << 32);
      continue;
    }
    if (load<uint16_t>(nd + 6) != 8) break;
    return check_newest_free(1 - current_, load<uint64_t>(nd + kNodeHeader));
  }
  const uint64_t which = 1 - current_;
  return damaged(which, which * page_size_ + kFreeDbAt + 40,
                 "the free list of the older meta page cannot be read down to its newest "
                 "record");
}

}  // namespace

Result<Summary> check_file(const std::string& path, const PageVisitor& visit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return not_found("no database file " + path);
    return io_error("cannot open " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return io_error("cannot stat " + path + ": " + std::strerror(e));
  }
  Checker checker(path, fd, static_cast<uint64_t>(st.st_size));
  auto summary = checker.run(visit);
  ::close(fd);
  return summary;
}

}  // namespace evl::lmdb_check

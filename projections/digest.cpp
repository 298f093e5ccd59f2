#include "projections/digest.h"

#include <openssl/evp.h>
#include <sodium.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <vector>

#include "keys/note.h"
#include "ledger/thread_pool.h"

namespace evl {

namespace {

constexpr size_t kExpandedBytes = 2 * kProjectionLanes;

// The record's 2048-byte expansion: ChaCha20 (IETF, 96-bit zero nonce, counter from 0) keyed
// by its record hash, i.e. libsodium's crypto_stream_chacha20_ietf. Computed with OpenSSL's
// ChaCha20, whose 16-byte IV is the 32-bit little-endian block counter then the 96-bit nonce
// (all zero here), encrypting zeros: the same keystream (digest_test checks it against
// libsodium), in 0.52 µs per record here against libsodium's 0.85 µs (OpenSSL has AVX-512 code;
// libsodium 1.0.18 stops at AVX2). A rebuild expands every record it writes.
struct Expander {
  EVP_CIPHER* cipher = EVP_CIPHER_fetch(nullptr, "ChaCha20", nullptr);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Expander() {
    EVL_ASSERT(cipher != nullptr && ctx != nullptr);
    // Set up once: later inits give the key and IV only, which skips the cipher's setup.
    EVL_ASSERT(EVP_EncryptInit_ex2(ctx, cipher, nullptr, nullptr, nullptr) == 1);
  }
  ~Expander() {
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(cipher);
  }
  Expander(const Expander&) = delete;
  Expander& operator=(const Expander&) = delete;
};

void expand(const Digest& record_hash, uint8_t out[kExpandedBytes]) {
  static_assert(std::tuple_size_v<Digest> == crypto_stream_chacha20_ietf_KEYBYTES);
  static const uint8_t kZeroIv[16] = {};  // block counter 0, then the zero nonce
  static const uint8_t kZeros[kExpandedBytes] = {};
  thread_local Expander expander;
  int written = 0;
  EVL_ASSERT(EVP_EncryptInit_ex2(expander.ctx, nullptr, record_hash.data(), kZeroIv, nullptr) == 1);
  EVL_ASSERT(EVP_EncryptUpdate(expander.ctx, out, &written, kZeros, kExpandedBytes) == 1);
  EVL_ASSERT(written == static_cast<int>(kExpandedBytes));
}

uint16_t lane_at(const uint8_t* bytes, size_t i) {
  return static_cast<uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
}

// The lanes of a record's expansion. On a little-endian host the keystream's bytes are the
// lanes as they lie, and adding them is a plain vector add: 0.11 µs per record here against
// 0.18 µs when each lane is put together from its two bytes.
using Lanes = std::array<uint16_t, kProjectionLanes>;
Lanes expanded_lanes(std::string_view key, std::string_view value) {
  Lanes lanes;
  static_assert(sizeof lanes == kExpandedBytes);
  auto* bytes = reinterpret_cast<uint8_t*>(lanes.data());
  expand(projection_record_hash(key, value), bytes);
  if constexpr (std::endian::native != std::endian::little) {
    for (size_t i = 0; i < kProjectionLanes; ++i) {
      uint8_t pair[2];
      std::memcpy(pair, bytes + 2 * i, 2);
      lanes[i] = lane_at(pair, 0);
    }
  }
  return lanes;
}

}  // namespace

Digest projection_record_hash(std::string_view key, std::string_view value) {
  // What comes before the value in one update when the key is short (every key of the store
  // is): an update is a call through OpenSSL's EVP layer, and a rebuild hashes a record for
  // every event or two.
  constexpr size_t kShortKey = 256;
  Sha256 hasher;
  if (key.size() <= kShortKey) {
    std::array<uint8_t, kProjectionRecordDomain.size() + 8 + kShortKey + 8> head;
    uint8_t* at = head.data();
    at = std::copy(kProjectionRecordDomain.begin(), kProjectionRecordDomain.end(), at);
    put_u64_be(key.size(), at);
    at = std::copy(key.begin(), key.end(), at + 8);
    put_u64_be(value.size(), at);
    hasher.update(ByteView(head.data(), static_cast<size_t>(at + 8 - head.data())));
  } else {
    hasher.update(kProjectionRecordDomain);
    hasher.update(ByteView(u64_be(key.size())));
    hasher.update(key);
    hasher.update(ByteView(u64_be(value.size())));
  }
  hasher.update(value);
  return hasher.finish();
}

void ProjectionAccumulator::add(std::string_view key, std::string_view value) {
  const Lanes expansion = expanded_lanes(key, value);
  for (size_t i = 0; i < kProjectionLanes; ++i) {
    lanes_[i] = static_cast<uint16_t>(lanes_[i] + expansion[i]);
  }
  ++count_;
}

void ProjectionAccumulator::remove(std::string_view key, std::string_view value) {
  const Lanes expansion = expanded_lanes(key, value);
  for (size_t i = 0; i < kProjectionLanes; ++i) {
    lanes_[i] = static_cast<uint16_t>(lanes_[i] - expansion[i]);
  }
  --count_;  // mod 2^64, like the lanes: removing what was added restores the sums exactly
}

void ProjectionAccumulator::merge(const ProjectionAccumulator& other) {
  for (size_t i = 0; i < kProjectionLanes; ++i) {
    lanes_[i] = static_cast<uint16_t>(lanes_[i] + other.lanes_[i]);
  }
  count_ += other.count_;
}

void ProjectionAccumulator::unmerge(const ProjectionAccumulator& other) {
  for (size_t i = 0; i < kProjectionLanes; ++i) {
    lanes_[i] = static_cast<uint16_t>(lanes_[i] - other.lanes_[i]);
  }
  count_ -= other.count_;
}

Bytes ProjectionAccumulator::serialize() const {
  Bytes out(kSerializedSize);
  put_u64_be(count_, out.data());
  for (size_t i = 0; i < kProjectionLanes; ++i) {
    out[8 + 2 * i] = static_cast<uint8_t>(lanes_[i] & 0xff);
    out[8 + 2 * i + 1] = static_cast<uint8_t>(lanes_[i] >> 8);
  }
  return out;
}

Result<ProjectionAccumulator> ProjectionAccumulator::parse(ByteView bytes) {
  if (bytes.size() != kSerializedSize) {
    return corrupt("a projection accumulator is " + std::to_string(kSerializedSize) +
                   " bytes, not " + std::to_string(bytes.size()));
  }
  ProjectionAccumulator out;
  out.count_ = get_u64_be(bytes.data());
  for (size_t i = 0; i < kProjectionLanes; ++i) out.lanes_[i] = lane_at(bytes.data() + 8, i);
  return out;
}

Digest ProjectionAccumulator::digest() const {
  Bytes sums = serialize();  // u64be(count) ‖ lanes: exactly what follows the domain
  Sha256 hasher;
  hasher.update(kProjectionDigestDomain);
  hasher.update(ByteView(sums));
  return hasher.finish();
}

void ProjectionRecords::add(std::string_view key, std::string_view value) {
  records_.push_back({arena_.size(), key.size(), value.size()});
  arena_.append(key);
  arena_.append(value);
}

void ProjectionRecords::reserve(size_t bytes) {
  arena_.reserve(bytes);
  records_.reserve(bytes / 512);  // a record of the store is rarely shorter
}

void ProjectionRecords::clear() {
  arena_.clear();
  records_.clear();
}

ProjectionAccumulator ProjectionRecords::sums(ThreadPool* pool) const {
  constexpr size_t kParallelFrom = 64;  // fewer are not worth waking the pool
  // Several shares a thread, claimed one at a time, so that a slow thread holds no one back.
  const size_t shares =
      pool != nullptr && pool->size() > 1 && records_.size() >= kParallelFrom ? 4 * pool->size()
                                                                             : 1;
  std::vector<ProjectionAccumulator> sums(shares);
  auto add_share = [&](size_t share) {
    const size_t n = records_.size();
    for (size_t i = n * share / shares; i < n * (share + 1) / shares; ++i) {
      auto [at, key_size, value_size] = records_[i];
      sums[share].add(std::string_view(arena_.data() + at, key_size),
                      std::string_view(arena_.data() + at + key_size, value_size));
    }
  };
  if (shares == 1) {
    add_share(0);
  } else {
    pool->parallel_for(shares, add_share, 1);
  }
  for (size_t i = 1; i < shares; ++i) sums[0].merge(sums[i]);
  return sums[0];
}

Result<ProjectionAccumulator> accumulate_projection_store(const ProjectionStore& store) {
  // The scan copies a batch of records at a time and hashes it on all cores (a rebuild's seal
  // spent a quarter of its time here on one core).
  constexpr size_t kBatchRecords = 4096;
  ThreadPool pool;
  ProjectionAccumulator sums;
  ProjectionRecords batch;
  Status s = store.scan("", [&](std::string_view key, std::string_view value) {
    batch.add(key, value);
    if (batch.size() == kBatchRecords) {
      sums.merge(batch.sums(&pool));
      batch.clear();
    }
    return true;
  });
  if (!s) return s;
  sums.merge(batch.sums(&pool));
  return sums;
}

Result<Digest> projection_digest(const ProjectionStore& store) {
  auto sums = accumulate_projection_store(store);
  if (!sums) return sums.error();
  return sums->digest();
}

std::string projection_statement(std::string_view origin, uint64_t size, const Digest& digest) {
  std::string out(kProjectionDigestDomain);
  out += origin;
  out += '\n';
  out += std::to_string(size);
  out += '\n';
  out += base64_encode(digest);
  out += '\n';
  return out;
}

std::optional<std::string_view> other_projection_format(std::string_view text) {
  constexpr std::string_view kFamily = "evledger/projections/v";
  const size_t end = text.find('\n');
  if (end == std::string_view::npos || text.substr(0, kFamily.size()) != kFamily) {
    return std::nullopt;
  }
  const std::string_view line = text.substr(0, end);
  const std::string_view version = line.substr(kFamily.size());
  if (version.empty() || version.size() > 9 || version[0] == '0' ||
      version.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  if (line == kProjectionFormat) return std::nullopt;
  return line;
}

namespace {

Status other_format_error(std::string_view format) {
  return rejected("the statement is of projection format '" + std::string(format) +
                  "', made by another version of evledger; this one folds '" +
                  std::string(kProjectionFormat) + "' and cannot check it");
}

}  // namespace

Result<ProjectionStatement> parse_projection_statement(std::string_view text) {
  if (auto other = other_projection_format(text)) return other_format_error(*other);
  if (text.substr(0, kProjectionDigestDomain.size()) != kProjectionDigestDomain) {
    return rejected("a projection statement starts with the line " +
                    std::string(kProjectionFormat));
  }
  std::string_view rest = text.substr(kProjectionDigestDomain.size());
  std::string_view lines[3];
  for (auto& line : lines) {
    size_t end = rest.find('\n');
    if (end == std::string_view::npos) {
      return rejected("a projection statement has four lines, each ending in a newline");
    }
    line = rest.substr(0, end);
    rest.remove_prefix(end + 1);
  }
  if (!rest.empty()) return rejected("a projection statement has nothing after its digest line");
  ProjectionStatement out;
  if (lines[0].empty()) return rejected("the statement's origin line is empty");
  out.origin = std::string(lines[0]);
  auto size = parse_u64(lines[1]);
  if (!size || std::to_string(*size) != lines[1]) {
    return rejected("the statement's size line '" + std::string(lines[1]) +
                    "' is not a decimal number without leading zeros");
  }
  out.size = *size;
  auto digest = base64_decode(lines[2]);
  if (!digest || digest->size() != out.digest.size()) {
    return rejected("the statement's digest line is not the base64 of 32 bytes");
  }
  std::memcpy(out.digest.data(), digest->data(), out.digest.size());
  return out;
}

Result<OpenedStatement> open_statement_note(std::string_view note, const VerifierKey& log_key) {
  auto opened = open_note(note, std::span<const VerifierKey>(&log_key, 1));
  if (!opened) return opened.error().with_context("projection statement");
  if (auto other = other_projection_format(opened->text)) {
    return OpenedStatement{std::nullopt, std::string(*other)};
  }
  auto statement = parse_projection_statement(opened->text);
  if (!statement) return statement.error();
  if (statement->origin != log_key.name) {
    return rejected("projection statement origin '" + statement->origin +
                    "' is not the log key's name '" + log_key.name + "'");
  }
  return OpenedStatement{std::move(*statement), {}};
}

Result<ProjectionStatement> open_projection_statement(std::string_view note,
                                                      const VerifierKey& log_key) {
  auto opened = open_statement_note(note, log_key);
  if (!opened) return opened.error();
  if (!opened->statement) return other_format_error(opened->other_format);
  return std::move(*opened->statement);
}

}  // namespace evl

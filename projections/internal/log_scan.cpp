#include "projections/internal/log_scan.h"

#include <array>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace evl {

Status decode_event(uint64_t index, ByteView bytes, Digest& id, EventBody& body) {
  auto decoded = decode_entry_body(bytes, id);
  if (!decoded) return corrupt("entry " + std::to_string(index) + ": " + decoded.error().message());
  body = std::move(*decoded);
  return Status::ok();
}

namespace {

struct DecodedEntry {
  uint64_t index = 0;
  Digest id{};
  Result<EventBody> body;
  std::unique_ptr<PreparedManifest> prepared;
};

// Consecutive entries copied out of the transaction into one buffer: entry i is
// bytes[ends[i-1], ends[i]).
struct EntryChunk {
  uint64_t first = 0;
  Bytes bytes;
  std::vector<size_t> ends;
};

// Decodes a chunk and prepares its manifests (pure functions: any thread).
std::vector<DecodedEntry> decode_chunk(const EntryChunk& chunk) {
  std::vector<DecodedEntry> out;
  out.reserve(chunk.ends.size());
  size_t begin = 0;
  for (size_t i = 0; i < chunk.ends.size(); ++i) {
    const uint64_t index = chunk.first + i;
    ByteView bytes(chunk.bytes.data() + begin, chunk.ends[i] - begin);
    begin = chunk.ends[i];
    Digest id{};
    EventBody body;
    if (Status decoded = decode_event(index, bytes, id, body); !decoded) {
      out.push_back({index, {}, decoded, nullptr});
      continue;
    }
    std::unique_ptr<PreparedManifest> prepared = prepare_event(body);
    out.push_back({index, id, std::move(body), std::move(prepared)});
  }
  return out;
}

// The chunks between the scan and the visits. Chunk n (counted from 0) lives in slot n % kSlots:
// the scan fills it, either thread decodes it, the visits read it, and the slot is free again.
// The decoding thread takes the oldest queued chunk; the visiting thread, when the chunk it
// must visit next is still being decoded, takes the newest. A chunk's entries are freed on the
// thread that decoded them, where most of their memory was allocated (a free into another
// thread's malloc arena takes its lock).
class ChunkPipeline {
 public:
  explicit ChunkPipeline(const BodyVisitor& visit) : visit_(visit) {
    try {
      decoder_ = std::thread([this] { decode_loop(); });
    } catch (const std::system_error&) {  // EAGAIN: the visiting thread decodes everything
    }
  }
  ~ChunkPipeline() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    queued_or_garbage_.notify_all();
    if (decoder_.joinable()) decoder_.join();
  }
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // The scan's next entry (log order from index 0). Visits the oldest chunk when every slot
  // is taken.
  Status add(ByteView bytes) {
    EntryChunk& chunk = slot_of(filled_).chunk;
    chunk.bytes.insert(chunk.bytes.end(), bytes.begin(), bytes.end());
    chunk.ends.push_back(chunk.bytes.size());
    if (chunk.ends.size() < kChunk) return Status::ok();
    queue_filled();
    return filled_ - visited_ == kSlots ? visit_oldest() : Status::ok();
  }

  // After the scan's last entry: visits every chunk left.
  Status finish() {
    if (!slot_of(filled_).chunk.ends.empty()) queue_filled();
    while (visited_ < filled_) EVL_RETURN_IF_ERROR(visit_oldest());
    return Status::ok();
  }

 private:
  static constexpr size_t kChunk = 256;
  static constexpr uint64_t kSlots = 4;

  enum class State { kFree, kQueued, kDecoding, kDecoded };
  struct Slot {
    EntryChunk chunk;                   // filled while kFree; read by its decoder
    std::vector<DecodedEntry> decoded;  // set when kDecoded
    State state = State::kFree;
    bool by_decoder = false;  // decoded on the decoding thread (which then frees it)
  };

  Slot& slot_of(uint64_t n) { return slots_[n % kSlots]; }

  void queue_filled() {
    Slot& slot = slot_of(filled_);
    slot.chunk.first = next_index_;
    next_index_ += slot.chunk.ends.size();
    {
      std::lock_guard lock(mu_);
      slot.state = State::kQueued;
    }
    queued_or_garbage_.notify_one();
    ++filled_;
  }

  // Claims the queued `slot` for this thread and decodes it, with `lock` released meanwhile.
  static void decode_queued(Slot& slot, std::unique_lock<std::mutex>& lock, bool by_decoder) {
    slot.state = State::kDecoding;
    lock.unlock();
    std::vector<DecodedEntry> decoded = decode_chunk(slot.chunk);
    lock.lock();
    slot.decoded = std::move(decoded);
    slot.by_decoder = by_decoder;
    slot.state = State::kDecoded;
  }

  Status visit_oldest() {
    Slot& oldest = slot_of(visited_);
    std::unique_lock lock(mu_);
    while (oldest.state != State::kDecoded) {
      Slot* claim = oldest.state == State::kQueued ? &oldest : nullptr;
      for (uint64_t n = filled_; claim == nullptr && n-- > visited_ + 1;) {
        if (slot_of(n).state == State::kQueued) claim = &slot_of(n);
      }
      if (claim == nullptr) {
        decoded_.wait(lock);
        continue;
      }
      decode_queued(*claim, lock, false);
    }
    lock.unlock();
    Status s = visit_chunk(oldest.decoded);
    std::vector<DecodedEntry> done = std::move(oldest.decoded);
    oldest.decoded.clear();
    oldest.chunk.bytes.clear();
    oldest.chunk.ends.clear();
    lock.lock();
    oldest.state = State::kFree;
    if (oldest.by_decoder && decoder_.joinable()) {
      garbage_.push_back(std::move(done));
      lock.unlock();
      queued_or_garbage_.notify_one();
    } else {
      lock.unlock();
      done.clear();
    }
    ++visited_;
    return s;
  }

  Status visit_chunk(std::vector<DecodedEntry>& chunk) {
    for (DecodedEntry& e : chunk) {
      if (!e.body) return e.body.error();
      EVL_RETURN_IF_ERROR(visit_(e.index, e.id, *e.body, e.prepared.get()));
    }
    return Status::ok();
  }

  void decode_loop() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      if (!garbage_.empty()) {
        std::vector<std::vector<DecodedEntry>> garbage = std::move(garbage_);
        garbage_.clear();
        lock.unlock();
        garbage.clear();
        lock.lock();
        continue;
      }
      Slot* claim = nullptr;
      for (Slot& slot : slots_) {
        if (slot.state != State::kQueued) continue;
        if (claim == nullptr || slot.chunk.first < claim->chunk.first) claim = &slot;
      }
      if (claim == nullptr) {
        queued_or_garbage_.wait(lock);
        continue;
      }
      decode_queued(*claim, lock, true);
      decoded_.notify_one();
    }
  }

  const BodyVisitor& visit_;
  std::array<Slot, kSlots> slots_;
  // The visiting thread's own counters: chunks queued, chunks visited, the next entry's index.
  uint64_t filled_ = 0, visited_ = 0, next_index_ = 0;
  std::mutex mu_;  // guards the slots' states, decoded entries and garbage_, and stop_
  std::condition_variable queued_or_garbage_, decoded_;
  std::vector<std::vector<DecodedEntry>> garbage_;  // visited, for the decoding thread to free
  bool stop_ = false;
  std::thread decoder_;  // joined by the destructor, before the slots go
};

}  // namespace

Status scan_bodies(AppendContext& context, uint64_t size, const BodyVisitor& visit) {
  ChunkPipeline pipeline(visit);
  EVL_RETURN_IF_ERROR(context.scan(
      0, size, [&](uint64_t, ByteView bytes) -> Status { return pipeline.add(bytes); }));
  return pipeline.finish();
}

}  // namespace evl

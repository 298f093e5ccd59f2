#include "tools/server/caches.h"

#include "events/bytes.h"
#include "events/sha256.h"
#include "keys/checkpoint.h"
#include "keys/note.h"

namespace evl::server {

std::shared_ptr<const std::string> ResourceCache::find(const std::string& path) {
  std::lock_guard lock(mu_);
  auto it = slots_.find(path);
  if (it == slots_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second.position);
  return it->second.bytes;
}

void ResourceCache::insert(const std::string& path, std::shared_ptr<const std::string> bytes) {
  if (!bytes || bytes->size() > max_bytes_ / 4) return;  // one resource never fills the cache
  std::lock_guard lock(mu_);
  if (slots_.count(path) != 0) return;
  order_.push_front(path);
  bytes_ += bytes->size();
  slots_.emplace(path, Slot{std::move(bytes), order_.begin()});
  while (bytes_ > max_bytes_ && !order_.empty()) {
    auto victim = slots_.find(order_.back());
    bytes_ -= victim->second.bytes->size();
    slots_.erase(victim);
    order_.pop_back();
  }
}

size_t ResourceCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

Result<std::shared_ptr<const PublishedCheckpoint>> CheckpointCache::current() {
  // The id first: a commit after it moves it again, so the next call reads afresh.
  const uint64_t id = ledger_.commit_id();
  std::lock_guard lock(mu_);
  if (current_ && id == commit_id_) return current_;
  auto note = ledger_.checkpoint();
  if (!note) return note.error();
  auto parsed = parse_note(*note);
  if (!parsed) return corrupt("the ledger's newest checkpoint is not a signed note: " +
                              parsed.error().message() + "; run evledger verify");
  auto body = parse_checkpoint_body(parsed->text);
  if (!body) return corrupt("the ledger's newest checkpoint: " + body.error().message() +
                            "; run evledger verify");
  auto published = std::make_shared<PublishedCheckpoint>();
  published->size = body->size;
  Digest digest = sha256(as_bytes(*note));
  published->etag = "\"" + hex_encode(ByteView(digest.data(), 16)) + "\"";
  published->note = std::move(*note);
  current_ = std::move(published);
  commit_id_ = id;
  return current_;
}

}  // namespace evl::server

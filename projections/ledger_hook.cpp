#include "projections/ledger_hook.h"

#include <vector>

#include "projections/projector.h"
#include "projections/query.h"

namespace evl {

namespace {

bool is_compromise(const EventBody& body) {
  const auto* revoke = std::get_if<KeyRevoke>(&body.payload);
  return revoke != nullptr && revoke->reason == RevokeReason::kCompromised;
}

ProjectedEvent projected(uint64_t index, const Digest& id, const EventBody& body,
                         const KeyPolicy& author_keys, const KeyPolicy& void_keys) {
  ProjectedEvent event;
  event.index = index;
  event.id = id;
  event.body = &body;
  if (const KeyRecord* author = author_keys.find(body.author)) {
    event.author_name = author->name;
    event.author_roles = author->roles;
    event.author_scope = author->scope;
  } else {
    event.author_name = author_keys.describe(body.author);
  }
  event.void_cause = void_keys.void_cause(body.author, index);
  if (void_keys.genesis()) event.rerun_tolerance_milli = void_keys.genesis()->rerun_tolerance_milli;
  return event;
}

Status clear(KeyValueStore& store) {
  std::vector<std::string> keys;
  EVL_RETURN_IF_ERROR(store.scan("", [&](std::string_view key, std::string_view) {
    keys.emplace_back(key);
    return true;
  }));
  for (const auto& key : keys) EVL_RETURN_IF_ERROR(store.erase(key));
  return Status::ok();
}

class ProjectionHook final : public AppendHook {
 public:
  Status on_entry(AppendContext& context, uint64_t index, const Digest& id,
                  const EventBody& body) override {
    if (is_compromise(body) && context.keys.voids_anything()) {
      // Earlier events may have become void: fold the whole prefix again.
      EVL_RETURN_IF_ERROR(clear(context.store));
      return rebuild(context, index + 1);
    }
    return projector_.apply(context.store, projected(index, id, body, context.keys, context.keys));
  }

  Status rebuild(AppendContext& context, uint64_t size) override {
    // Pass 1: the key state of the whole prefix, which says which events are void.
    KeyPolicy final_keys;
    EVL_RETURN_IF_ERROR(context.scan(0, size, [&](uint64_t index, ByteView bytes) -> Status {
      auto entry = decode_entry(bytes);
      if (!entry) return corrupt("entry " + std::to_string(index) + ": " + entry.error().message());
      auto body = decode_body(entry->body);
      if (!body) return corrupt("entry " + std::to_string(index) + ": " + body.error().message());
      final_keys.apply(index, *body);
      return Status::ok();
    }));
    // Pass 2: fold in order, with each author as the key state knew it at that position,
    // keeping the records in memory and writing each once, in key order, at the end.
    KeyPolicy running;
    ProjectionBatch batch(context.store);
    EVL_RETURN_IF_ERROR(context.scan(0, size, [&](uint64_t index, ByteView bytes) -> Status {
      auto entry = decode_entry(bytes);
      if (!entry) return corrupt("entry " + std::to_string(index) + ": " + entry.error().message());
      auto body = decode_body(entry->body);
      if (!body) return corrupt("entry " + std::to_string(index) + ": " + body.error().message());
      running.apply(index, *body);
      return batch.apply(projected(index, event_id(entry->body), *body, running, final_keys));
    }));
    return batch.flush();
  }

  Result<uint64_t> applied_size(const KeyValueStore& store) const override {
    return projected_size(store);
  }

 private:
  Projector projector_;
};

}  // namespace

std::shared_ptr<AppendHook> make_projection_hook() { return std::make_shared<ProjectionHook>(); }

}  // namespace evl

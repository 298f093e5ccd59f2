#include "ledger/upstream.h"

#include <fcntl.h>

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "events/event.h"
#include "events/file_read.h"
#include "ledger/http_client.h"
#include "ledger/thread_pool.h"
#include "ledger/tile_path.h"

namespace evl {

namespace {

constexpr unsigned kMaxConnections = 64;

// GET `target`: the body of a 200, kNotFound for 404 and 410, kIo for any other status.
Result<std::string> get_resource(HttpClient& client, std::string_view target) {
  auto response = client.get(target);
  if (!response) return response.error();
  if (response->status == 200) return std::move(response->body);
  const std::string url = client.url(target);
  if (response->status == 404 || response->status == 410) {
    return not_found(url + " is not there (HTTP " + std::to_string(response->status) + ")");
  }
  return io_error(url + " answered HTTP " + std::to_string(response->status) + " instead of 200");
}

// A resource that the checkpoint's size needs: missing is a broken upstream, not an absence.
Result<std::string> get_required(HttpClient& client, const std::string& target, uint64_t size) {
  auto body = get_resource(client, target);
  if (!body && body.error().code() == Code::kNotFound) {
    return corrupt(body.error().message() + ", but the upstream's tree of size " +
                   std::to_string(size) + " needs it");
  }
  return body;
}

uint32_t bundle_width(uint64_t n, uint64_t size) {
  return static_cast<uint32_t>(std::min<uint64_t>(kTileWidth, size - n * kTileWidth));
}

struct FetchedBundle {
  Status status;
  std::string data;
  std::vector<ByteView> entries;
};

FetchedBundle fetch_bundle(HttpClient& client, uint64_t n, uint64_t size) {
  FetchedBundle out;
  const uint32_t width = bundle_width(n, size);
  const std::string target = entry_bundle_path(n, width);
  auto data = get_required(client, target, size);
  if (!data) {
    out.status = data.error();
    return out;
  }
  out.data = std::move(*data);
  auto frames = split_entry_frames(as_bytes(out.data), width);
  if (!frames) {
    out.status = corrupt(client.url(target) + ": " + frames.error().message());
  } else if (frames->size() != width) {
    out.status = corrupt(client.url(target) + " holds " + std::to_string(frames->size()) +
                         " entries; a bundle of width " + std::to_string(width) + " holds " +
                         std::to_string(width));
  } else {
    out.entries = std::move(*frames);
  }
  return out;
}

// Reads one resource of a tile layout by its relative path; kNotFound when it is not there.
using TileFetch = std::function<Result<std::string>(const std::string& target)>;

class TileTree final : public HashReader {
 public:
  TileTree(TileFetch fetch, std::function<std::string(const std::string&)> name, uint64_t size)
      : fetch_(std::move(fetch)), name_(std::move(name)), size_(size) {}

  Result<std::vector<Hash>> read_hashes(std::span<const uint64_t> indexes) const override {
    std::vector<Hash> out;
    out.reserve(indexes.size());
    for (uint64_t index : indexes) {
      HashTile tile = tile_for_stored_hash(index);
      const uint64_t count = size_ >> (kTileHeight * tile.level);  // complete nodes there
      const uint64_t before = tile.n * kTileWidth;
      const uint64_t width = count > before ? std::min<uint64_t>(kTileWidth, count - before) : 0;
      if (width < tile.width) {
        return not_found("stored hash " + std::to_string(index) + " is not in the tree of size " +
                         std::to_string(size_));
      }
      tile.width = static_cast<uint32_t>(width);
      auto data = load(tile);
      if (!data) return data.error();
      auto hash = hash_from_tile(tile, as_bytes(**data), index);
      if (!hash) return hash.error();
      out.push_back(*hash);
    }
    return out;
  }

 private:
  Result<const std::string*> load(const HashTile& tile) const {
    auto key = std::pair(tile.level, tile.n);
    if (auto it = tiles_.find(key); it != tiles_.end()) return &it->second;
    const std::string target = hash_tile_path(tile);
    auto data = fetch_(target);
    if (!data && data.error().code() == Code::kNotFound) {
      return corrupt(data.error().message() + ", but the tree of size " + std::to_string(size_) +
                     " needs it");
    }
    if (!data) return data.error();
    if (data->size() != size_t{tile.width} * kHashSize) {
      return corrupt(name_(target) + " is " + std::to_string(data->size()) +
                     " bytes; a hash tile of width " + std::to_string(tile.width) + " is " +
                     std::to_string(size_t{tile.width} * kHashSize));
    }
    return &tiles_.emplace(key, std::move(*data)).first->second;
  }

  TileFetch fetch_;
  std::function<std::string(const std::string&)> name_;
  uint64_t size_;
  mutable std::map<std::pair<int, uint64_t>, std::string> tiles_;
};

std::unique_ptr<HashReader> http_tile_tree(HttpClient& client, uint64_t size) {
  return std::make_unique<TileTree>(
      [&client](const std::string& target) { return get_resource(client, target); },
      [&client](const std::string& target) { return client.url(target); }, size);
}

class HttpUpstream final : public Upstream {
 public:
  HttpUpstream(std::unique_ptr<HttpClient> main, std::vector<std::unique_ptr<HttpClient>> pullers)
      : main_(std::move(main)), pullers_(std::move(pullers)) {}

  std::string url(std::string_view target) const override { return main_->url(target); }

  Result<std::string> checkpoint() override { return get_resource(*main_, "checkpoint"); }

  Result<std::optional<std::string>> statement(uint64_t size) override {
    auto body = get_resource(*main_, "api/v1/statement?size=" + std::to_string(size));
    if (!body && body.error().code() == Code::kNotFound) return std::optional<std::string>();
    if (!body) return body.error();
    auto json = nlohmann::json::parse(*body, nullptr, false);
    if (json.is_discarded() || !json.is_object() || !json.contains("note") ||
        !json["note"].is_string()) {
      return corrupt(main_->url("api/v1/statement") + " answered no JSON object with a note");
    }
    return std::optional<std::string>(json["note"].get<std::string>());
  }

  Status fetch_entries(uint64_t from, uint64_t to, uint64_t size, size_t window,
                       const EntryRun& deliver) override;

  std::unique_ptr<HashReader> tree(uint64_t size) override {
    return http_tile_tree(*main_, size);
  }

 private:
  std::unique_ptr<HttpClient> main_;  // the caller's thread: notes, statements, hash tiles
  std::vector<std::unique_ptr<HttpClient>> pullers_;  // one per fetching thread
};

Status HttpUpstream::fetch_entries(uint64_t from, uint64_t to, uint64_t size, size_t window,
                                   const EntryRun& deliver) {
  if (from >= to) return Status::ok();
  if (to > size) return usage_error("entries past the tree's size cannot be fetched");
  const uint64_t first = from / kTileWidth, last = (to - 1) / kTileWidth;
  window = std::max<size_t>(window, 1);
  std::mutex mu;
  std::condition_variable cv;
  std::map<uint64_t, FetchedBundle> fetched;
  uint64_t next = first, delivered = first;
  bool stop = false;
  auto fetcher = [&](HttpClient& client) {
    for (;;) {
      uint64_t n;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stop || next > last || next < delivered + window; });
        if (stop || next > last) return;
        n = next++;
      }
      FetchedBundle bundle = fetch_bundle(client, n, size);
      std::lock_guard lock(mu);
      fetched.emplace(n, std::move(bundle));
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  Status status;
  const uint64_t wanted = std::min<uint64_t>(pullers_.size(), last - first + 1);
  for (uint64_t i = 0; i < wanted && status; ++i) {
    auto thread = start_thread([&, i] { fetcher(*pullers_[i]); }, "a mirror's fetching thread");
    if (thread) threads.push_back(std::move(*thread));
    else status = thread.error();
  }
  for (uint64_t n = first; n <= last && status; ++n) {
    FetchedBundle bundle;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return fetched.count(n) != 0; });
      bundle = std::move(fetched.at(n));
      fetched.erase(n);
    }
    status = bundle.status;
    if (!status) break;
    const uint64_t begin = std::max(from, n * kTileWidth);
    const uint64_t end = std::min(to, n * kTileWidth + bundle.entries.size());
    status = deliver(begin, std::span<const ByteView>(bundle.entries)
                                .subspan(begin - n * kTileWidth, end - begin));
    std::lock_guard lock(mu);
    delivered = n + 1;
    cv.notify_all();
  }
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  cv.notify_all();
  for (auto& t : threads) t.join();
  return status;
}

}  // namespace

Result<std::unique_ptr<Upstream>> Upstream::open(const std::string& base_url,
                                                 unsigned connections) {
  if (connections < 1 || connections > kMaxConnections) {
    return usage_error("--connections must be 1 to " + std::to_string(kMaxConnections));
  }
  auto main = HttpClient::open(base_url);
  if (!main) return main.error();
  std::vector<std::unique_ptr<HttpClient>> pullers;
  for (unsigned i = 0; i < connections; ++i) {
    auto client = HttpClient::open(base_url);
    if (!client) return client.error();
    pullers.push_back(std::move(*client));
  }
  return std::unique_ptr<Upstream>(
      std::make_unique<HttpUpstream>(std::move(*main), std::move(pullers)));
}

Result<std::unique_ptr<HashReader>> tile_tree(const std::string& dir_or_url, uint64_t size) {
  if (dir_or_url.find("://") != std::string::npos) {
    auto client = HttpClient::open(dir_or_url);
    if (!client) return client.error();
    std::shared_ptr<HttpClient> shared(std::move(*client));
    return std::unique_ptr<HashReader>(std::make_unique<TileTree>(
        [shared](const std::string& target) { return get_resource(*shared, target); },
        [shared](const std::string& target) { return shared->url(target); }, size));
  }
  const std::string root = dir_or_url;
  auto path = [root](const std::string& target) { return root + "/" + target; };
  return std::unique_ptr<HashReader>(std::make_unique<TileTree>(
      [path](const std::string& target) -> Result<std::string> {
        const std::string file = path(target);
        auto data = read_file_at(AT_FDCWD, file, file, ReadLimit{"hash tile", 8192});
        if (!data) return data.error();
        if (!data->has_value()) return not_found(file + " does not exist");
        return std::move(**data);
      },
      path, size));
}

}  // namespace evl

// tools/gen/random.h — the generators' deterministic randomness and JSON shorthands.
//
// splitmix64: tiny, fast and the same on every machine, so a seed gives the same catalog and
// the same activity everywhere (no std:: distributions, whose output is not specified).
// Thread safety: an Rng is used by one thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "events/json.h"

namespace evl::gen {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double between(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  uint64_t below(uint64_t n) { return next() % n; }
  bool chance(double p) { return uniform() < p; }
  template <typename T>
  const T& pick(const std::vector<T>& items) { return items[below(items.size())]; }
  std::string hex(size_t digits) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    while (out.size() < digits) {
      uint64_t v = next();
      for (int i = 0; i < 16 && out.size() < digits; ++i, v >>= 4) out.push_back(kHex[v & 15]);
    }
    return out;
  }

 private:
  uint64_t state_;
};

inline Json O(std::initializer_list<Json::Member> members) { return Json(Json::Object(members)); }
inline Json A(std::initializer_list<Json> items) { return Json(Json::Array(items)); }

}  // namespace evl::gen

#include "tools/projection_cli.h"

#include "events/jcs.h"
#include "projections/query.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

Status with_projections(const Args& args,
                        const std::function<Status(const KeyValueStore&, uint64_t)>& fn) {
  return with_projections(args, [&](const Ledger&, const KeyValueStore& state, uint64_t size) {
    return fn(state, size);
  });
}

Status with_projections(
    const Args& args,
    const std::function<Status(const Ledger&, const KeyValueStore&, uint64_t)>& fn) {
  auto ledger = open_ledger(args, false);
  if (!ledger) return ledger.error();
  return (*ledger)->read_state([&](const KeyValueStore& state, uint64_t size) -> Status {
    auto applied = projected_size(state);
    if (!applied) return applied.error();
    if (*applied != size) {
      return rejected("the projections cover " + std::to_string(*applied) + " of " +
                      std::to_string(size) + " entries; run 'evledger rebuild --ledger " +
                      (*ledger)->dir() + "' (any append also catches them up)");
    }
    return fn(**ledger, state, size);
  });
}

Result<Digest> digest_arg(const std::string& text, const std::string& what) {
  auto digest = parse_digest_text(text);
  if (!digest) return usage_error(what + ": " + digest.error().message());
  return *digest;
}

std::string json_line(const Json& value) { return jcs_serialize(value); }

std::string text_of(const Json* value) {
  if (value == nullptr || value->is_null()) return "-";
  if (value->is_string()) return value->as_string();
  return jcs_serialize(*value);
}

}  // namespace evl::cli

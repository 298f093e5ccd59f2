#include "tools/projection_cli.h"

#include "events/jcs.h"
#include "events/utf8.h"
#include "projections/ledger_hook.h"
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
  bool lagging = false;
  Status s = read_projections(
      **ledger,
      [&](const KeyValueStore& state, uint64_t size) { return fn(**ledger, state, size); },
      &lagging);
  if (!lagging) return s;
  return rejected(s.message() + "; run 'evledger rebuild --ledger " + (*ledger)->dir() +
                  "' (any append also catches them up)");
}

}  // namespace evl::cli

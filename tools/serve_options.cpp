#include "tools/serve_options.h"

#include "events/bytes.h"

namespace evl::cli {

namespace {

Status parse_listen(const std::string& text, server::ServerOptions& options) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return usage_error("--listen " + text + " is not HOST:PORT, such as 127.0.0.1:8080");
  }
  options.host = text.substr(0, colon);
  if (options.host.size() > 2 && options.host.front() == '[' && options.host.back() == ']') {
    options.host = options.host.substr(1, options.host.size() - 2);  // [::1]:8080
  }
  options.port = text.substr(colon + 1);
  auto port = parse_u64(options.port);
  if (!port || *port > 65535) {
    return usage_error("--listen " + text + ": the port is a number from 0 to 65535");
  }
  return Status::ok();
}

}  // namespace

const char* const kServerLimitsUsage =
    "  --threads N          I/O threads (default: one per core)\n"
    "limits on clients (defaults in brackets):\n"
    "  --max-connections N [4096]  --header-limit BYTES [16384]  --header-timeout MS [10000]\n"
    "  --idle-timeout MS [30000]   --body-timeout MS [60000]     --write-timeout MS [60000]\n";

std::vector<OptionSpec> server_option_specs() {
  return {{"listen"},         {"threads"},      {"max-connections"}, {"header-limit"},
          {"header-timeout"}, {"idle-timeout"}, {"body-timeout"},    {"write-timeout"}};
}

Status parse_server_options(const Args& args, const std::string& fallback,
                            server::ServerOptions& options) {
  EVL_RETURN_IF_ERROR(parse_listen(args.get("listen").value_or(fallback), options));
  struct Bound {
    const char* name;
    uint64_t fallback;
    U64Range range;
  };
  const Bound bounds[] = {
      {"threads", 0, {0, 256, "0: one per core"}},
      {"max-connections", 4096, {1, 1u << 20}},
      {"header-limit", 16384, {1024, 1u << 20}},
      {"header-timeout", 10000, {10, 3600000}},
      {"idle-timeout", 30000, {10, 3600000}},
      {"body-timeout", 60000, {10, 3600000}},
      {"write-timeout", 60000, {10, 3600000}},
  };
  uint64_t v[std::size(bounds)];
  for (size_t i = 0; i < std::size(bounds); ++i) {
    auto r = args.get_u64(bounds[i].name, bounds[i].fallback, bounds[i].range);
    if (!r) return r.error();
    v[i] = *r;
  }
  auto& l = options.limits;
  options.threads = static_cast<unsigned>(v[0]);
  l.max_connections = v[1];
  l.header_limit = v[2];
  l.header_timeout = std::chrono::milliseconds(v[3]);
  l.idle_timeout = std::chrono::milliseconds(v[4]);
  l.body_timeout = std::chrono::milliseconds(v[5]);
  l.write_timeout = std::chrono::milliseconds(v[6]);
  return Status::ok();
}

std::string server_url(const server::ServerOptions& options, uint16_t port) {
  const std::string host =
      options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  return "http://" + host + ":" + std::to_string(port);
}

}  // namespace evl::cli

// tools/serve_options.h — the options that every HTTP front end (`evledger serve`,
// `evledger witness serve`) takes alike: --listen HOST:PORT, --threads and the limits on
// clients, parsed into server::ServerOptions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/cli.h"
#include "tools/server/server.h"

namespace evl::cli {

// The usage text of --threads and the client limits, with their defaults.
extern const char* const kServerLimitsUsage;
// The option names of --listen, --threads and the client limits, for run_command.
std::vector<OptionSpec> server_option_specs();

// --listen (default `fallback`), --threads and the client limits.
Status parse_server_options(const Args& args, const std::string& fallback,
                            server::ServerOptions& options);

// "http://HOST:PORT" of a started server, with an IPv6 host in brackets.
std::string server_url(const server::ServerOptions& options, uint16_t port);

}  // namespace evl::cli

// tools/cli.h — what every evledger subcommand shares: argument parsing, exit codes, output.
//
// Exit codes: 0 ok, 1 rejected or failed verification, 2 usage, 3 I/O or environment.
// Thread safety: used from main()'s thread only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/status.h"

namespace evl::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRejected = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitIo = 3;

int exit_code(Code code);

// Prints "evledger: <message>" to stderr and returns the exit code for the Status.
int fail(const Status& status);

struct OptionSpec {
  std::string name;         // without the leading dashes
  bool takes_value = true;  // false: a flag
  bool repeats = false;     // may be given more than once (values in Args::all)
};

// The values a numeric option takes, inclusive; `note` is said with them ("0: every core").
struct U64Range {
  uint64_t min = 0;
  uint64_t max = UINT64_MAX;
  const char* note = "";
};
// For options whose every value means something (an index, a seed).
inline constexpr U64Range kAnyU64{};

// Parsed arguments of one subcommand. Options may be given as --name VALUE or --name=VALUE;
// an option that takes a value may be given once, unless its spec repeats (a second value is
// a usage error, never silently the one that wins); "--" ends options; a lone "-" is a
// positional (standard input).
class Args {
 public:
  static Result<Args> parse(const std::vector<std::string>& argv,
                            const std::vector<OptionSpec>& specs);

  bool help() const { return help_; }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::optional<std::string> get(const std::string& name) const;
  std::vector<std::string> all(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // The option's value or a usage error naming it.
  Result<std::string> require(const std::string& name) const;
  // An unsigned decimal option in `range`, or `fallback` when absent; kUsage naming the option
  // and the range otherwise.
  Result<uint64_t> get_u64(const std::string& name, uint64_t fallback, U64Range range) const;
  // As get_u64, or nullopt when absent.
  Result<std::optional<uint64_t>> get_optional_u64(const std::string& name, U64Range range) const;

 private:
  bool help_ = false;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

// Runs a subcommand body: prints `usage` for --help, maps parse errors to exit 2.
using CommandFn = int (*)(const Args& args);
int run_command(const std::vector<std::string>& argv, const std::vector<OptionSpec>& specs,
                const char* usage, CommandFn fn);

// Writes bytes to a file (created 0644, replaced) or to standard output for "-".
Status write_output(const std::string& path, std::string_view bytes);

// A one-line progress bar on stderr, silent when stderr is not a terminal.
class Progress {
 public:
  Progress(std::string label, uint64_t total);
  ~Progress();
  void update(uint64_t done);
  // As update(done), with the total learnt late (0 leaves it unchanged).
  void update(uint64_t done, uint64_t total) {
    if (total != 0) total_ = total;
    update(done);
  }

 private:
  std::string label_;
  uint64_t total_;
  bool tty_;
  int64_t last_ms_ = 0;
};

int64_t now_ms();

// Prints one JSON value (nlohmann::json or ordered_json) compactly on its own line of standard
// output; a string that is not UTF-8 is printed with U+FFFD rather than failing the command.
template <typename JsonValue>
void print_json_line(const JsonValue& j) {
  std::string line = j.dump(-1, ' ', false, JsonValue::error_handler_t::replace);
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stdout);
}

}  // namespace evl::cli

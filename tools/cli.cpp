#include "tools/cli.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "events/bytes.h"
#include "tools/render.h"

namespace evl::cli {

int exit_code(Code code) {
  switch (code) {
    case Code::kOk: return kExitOk;
    case Code::kRejected:
    case Code::kDenied:
    case Code::kCorrupt:
    case Code::kNotFound: return kExitRejected;
    case Code::kUsage: return kExitUsage;
    case Code::kIo: return kExitIo;
  }
  return kExitIo;
}

int fail(const Status& status) {
  // Messages quote input (names, documents, remote logs): nothing in them reaches the
  // terminal as a control character.
  std::fprintf(stderr, "evledger: %s\n", visible_lines(status.message()).c_str());
  return exit_code(status.code());
}

Result<Args> Args::parse(const std::vector<std::string>& argv,
                         const std::vector<OptionSpec>& specs) {
  Args args;
  bool options_done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (options_done || arg.size() < 2 || arg.rfind("--", 0) != 0) {
      if (!options_done && arg.size() >= 2 && arg[0] == '-' && arg[1] != '-') {
        if (arg == "-h") {
          args.help_ = true;
          continue;
        }
        return usage_error("unknown option '" + arg + "'; options are spelled --name");
      }
      args.positional_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (name == "help") {
      args.help_ = true;
      continue;
    }
    const OptionSpec* spec = nullptr;
    for (const auto& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) return usage_error("unknown option --" + name + "; see --help");
    if (!spec->takes_value) {
      if (inline_value) return usage_error("--" + name + " takes no value");
      args.values_[name].push_back("");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argv.size()) return usage_error("--" + name + " needs a value");
      inline_value = argv[++i];
    }
    auto& values = args.values_[name];
    if (!spec->repeats && !values.empty()) {
      return usage_error("--" + name + " is given twice ('" + values.front() + "' and '" +
                         *inline_value + "'); it takes one value: give it once");
    }
    values.push_back(*inline_value);
  }
  return args;
}

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

Result<std::string> Args::require(const std::string& name) const {
  auto v = get(name);
  if (!v || v->empty()) return usage_error("--" + name + " is required; see --help");
  return *v;
}

Result<uint64_t> Args::get_u64(const std::string& name, uint64_t fallback, U64Range range) const {
  auto v = get(name);
  if (!v) return fallback;
  auto n = parse_u64(*v);
  if (!n) return usage_error("--" + name + ": " + n.error().message());
  if (*n < range.min || *n > range.max) {
    std::string note = *range.note != '\0' ? std::string(" (") + range.note + ")" : "";
    return usage_error("--" + name + " " + *v + " is out of range: give " +
                       std::to_string(range.min) + " to " + std::to_string(range.max) + note);
  }
  return *n;
}

Result<std::optional<uint64_t>> Args::get_optional_u64(const std::string& name,
                                                       U64Range range) const {
  if (!has(name)) return std::optional<uint64_t>();
  auto n = get_u64(name, 0, range);
  if (!n) return n.error();
  return std::optional<uint64_t>(*n);
}

int run_command(const std::vector<std::string>& argv, const std::vector<OptionSpec>& specs,
                const char* usage, CommandFn fn) {
  auto args = Args::parse(argv, specs);
  if (!args) {
    std::fprintf(stderr, "evledger: %s\n\n%s", args.error().message().c_str(), usage);
    return kExitUsage;
  }
  if (args->help()) {
    std::fputs(usage, stdout);
    return kExitOk;
  }
  return fn(*args);
}

Status write_output(const std::string& path, std::string_view bytes) {
  if (path == "-") {
    std::fwrite(bytes.data(), 1, bytes.size(), stdout);
    std::fflush(stdout);
    return std::ferror(stdout) ? io_error("cannot write to standard output") : Status::ok();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return io_error("cannot write " + path);
  return Status::ok();
}

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Progress::Progress(std::string label, uint64_t total)
    : label_(std::move(label)), total_(total), tty_(::isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (tty_ && last_ms_ != 0) std::fputs("\n", stderr);
}

void Progress::update(uint64_t done) {
  if (!tty_) return;
  int64_t now = now_ms();
  if (done < total_ && now - last_ms_ < 100) return;
  last_ms_ = now;
  int pct = total_ == 0 ? 100 : static_cast<int>(done * 100 / total_);
  int bars = pct / 4;
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% %llu/%llu", label_.c_str(), bars,
               "#########################", 25 - bars, "", pct,
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_));
  std::fflush(stderr);
}

}  // namespace evl::cli

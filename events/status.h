// events/status.h — expected outcomes as values: Status and Result<T>.
//
// Exceptions are for bugs (EVL_ASSERT) only. A bad signature, a non-canonical byte or a
// missing file is an outcome that the caller reports; it travels as a Status with a code and a
// message that names the thing, the rule and the fix. Result<T> mirrors std::expected's member
// names (has_value, value, error) so that a later switch to C++23 is mechanical.
//
// Thread safety: value types; no shared state.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace evl {

// The codes map onto the CLI's exit codes (tools/cli.h): kRejected, kDenied, kCorrupt and
// kNotFound → 1, kUsage → 2, kIo → 3; and onto HTTP statuses (tools/server/http.h): kRejected
// 400, kDenied 403, kNotFound 404, kUsage 400, kCorrupt and kIo 500.
enum class Code {
  kOk = 0,
  kRejected,  // input that breaks a rule: bad signature, format, a key rule; nothing was changed
  kCorrupt,   // stored data fails verification: a tampered or damaged ledger
  kNotFound,  // a lookup found nothing (an id, an index, a file)
  kUsage,     // the caller asked for something that makes no sense
  kIo,        // the environment failed: disk, permissions, LMDB, the network
  kDenied,    // a well-formed event whose signer lacks the key, role or scope it needs there
};

const char* code_name(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "<context>: <message>".
  Status with_context(const std::string& context) const {
    return is_ok() ? *this : Status(code_, context + ": " + message_);
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status rejected(std::string message) { return Status(Code::kRejected, std::move(message)); }
inline Status corrupt(std::string message) { return Status(Code::kCorrupt, std::move(message)); }
inline Status not_found(std::string message) { return Status(Code::kNotFound, std::move(message)); }
inline Status usage_error(std::string message) { return Status(Code::kUsage, std::move(message)); }
inline Status io_error(std::string message) { return Status(Code::kIo, std::move(message)); }
inline Status denied(std::string message) { return Status(Code::kDenied, std::move(message)); }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design, like expected
  Result(Status error) : state_(std::move(error)) {
    if (std::get<Status>(state_).is_ok()) {
      std::fprintf(stderr, "evledger bug: Result constructed from an ok Status\n");
      std::abort();
    }
  }

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // The error; only valid when !has_value().
  const Status& error() const { return std::get<Status>(state_); }
  // Ok when a value is present, the error otherwise.
  Status status() const { return has_value() ? Status::ok() : error(); }

 private:
  std::variant<T, Status> state_;
};

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line);

}  // namespace evl

// For bugs only: a broken invariant inside evledger, never bad input.
#define EVL_ASSERT(expr) \
  ((expr) ? static_cast<void>(0) : ::evl::assertion_failed(#expr, __FILE__, __LINE__))

// Returns early with the Status when it is not ok.
#define EVL_RETURN_IF_ERROR(expr)          \
  do {                                     \
    ::evl::Status evl_status_ = (expr);    \
    if (!evl_status_.is_ok()) return evl_status_; \
  } while (0)

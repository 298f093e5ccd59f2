// tests/support/note_examples.h — the published signed-note examples, carried inline so that
// the key and note tests run without ../shared (vectors/note/ holds the same texts).
#pragma once

#include <string_view>

namespace evl::test {

// The C2SP signed-note specification's example (key name example.com/foo, key id 530d903a).
inline constexpr std::string_view kC2spVkey =
    "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";
inline constexpr std::string_view kC2spNote =
    "This is an example message.\n"
    "\n"
    "— example.com/foo "
    "Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n";

// The example of Go's golang.org/x/mod/sumdb/note documentation; both base64 texts hold a '+'.
inline constexpr std::string_view kGoSkey =
    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
inline constexpr std::string_view kGoVkey =
    "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";

}  // namespace evl::test

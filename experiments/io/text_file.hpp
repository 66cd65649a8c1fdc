// experiments/io/text_file.hpp: the whole of a text file (a tree, a config, a manifest), read a
// chunk at a time and refused early when it cannot be text: more than max_bytes (/dev/zero, a
// runaway file), or a NUL byte (a binary or sparse file). Throws std::runtime_error "PATH: why"
// (one line): cannot open, a folder, too large, a NUL byte at byte K, a read error.
#pragma once

#include <cstdint>
#include <string>

namespace carrier::io {

std::string ReadTextFile(const std::string& path, std::uint64_t max_bytes);

}  // namespace carrier::io

// experiments/io/text_file.cpp: ReadTextFile (contract in text_file.hpp).
#include "io/text_file.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace carrier::io {

std::string ReadTextFile(const std::string& path, std::uint64_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::runtime_error(path + ": is a folder, not a file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open for reading");
  std::string text;
  std::vector<char> chunk(std::size_t{1} << 20);
  while (f) {
    f.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const std::size_t got = static_cast<std::size_t>(f.gcount());
    if (got == 0) break;
    if (const void* nul = std::memchr(chunk.data(), 0, got))
      throw std::runtime_error(
          path + ": a NUL byte at byte " +
          std::to_string(text.size() +
                         static_cast<std::size_t>(static_cast<const char*>(nul) - chunk.data())) +
          ": not a text file");
    if (text.size() + got > max_bytes)
      throw std::runtime_error(path + ": longer than " + std::to_string(max_bytes) +
                               " bytes, the limit for this kind of file");
    text.append(chunk.data(), got);
  }
  if (f.bad()) throw std::runtime_error(path + ": read error");
  return text;
}

}  // namespace carrier::io

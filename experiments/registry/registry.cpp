// experiments/registry/registry.cpp: the name -> entry map (registry.hpp).
#include "registry/registry.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>

namespace carrier::registry {

namespace {
// A function-local static, so registration objects of other translation units may run first.
std::map<std::string, Entry>& Map() {
  static std::map<std::string, Entry> m;
  return m;
}
}  // namespace

bool Register(const Entry& e) {
  if (!Map().emplace(e.name, e).second) {
    std::fprintf(stderr, "carrier: user carrier '%s' registered twice\n", e.name.c_str());
    std::abort();
  }
  return true;
}

const Entry* Find(const std::string& name) {
  const auto it = Map().find(name);
  return it == Map().end() ? nullptr : &it->second;
}

std::vector<std::string> Names() {
  std::vector<std::string> out;
  for (const auto& [k, v] : Map()) out.push_back(k);
  return out;
}

std::string NamesSuffix() {
  std::string s;
  for (const auto& n : Names()) s += " " + n;
  return s;
}

}  // namespace carrier::registry

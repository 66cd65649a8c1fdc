// experiments/registry/registry.cpp: the name -> entry map (registry.hpp).
#include "registry/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>

#include "core/schedule.hpp"
#include "inputs/generators.hpp"
#include "precision/float128.hpp"
#include "precision/precision_policy.hpp"

namespace carrier::registry {

namespace {
// A function-local static, so registration objects of other translation units may run first.
std::map<std::string, Entry>& Map() {
  static std::map<std::string, Entry> m;
  return m;
}

template <class Pred>
std::vector<std::string> NamesWhere(Pred pred) {
  std::vector<std::string> out;
  for (const Entry* e : All())
    if (pred(*e)) out.push_back(e->name);
  return out;
}
}  // namespace

const std::vector<std::string>& ExpNames() {
  static const std::vector<std::string> names = {"libm", "portable", "fast"};
  return names;
}

ExpKind ParseExp(const std::string& text) {
  const auto& names = ExpNames();
  const auto it = std::find(names.begin(), names.end(), text);
  if (it == names.end())
    throw std::invalid_argument("exp policy '" + text + "' is not one of " + Join(names));
  return static_cast<ExpKind>(it - names.begin());
}

const char* InputKindName(InputKind k) {
  switch (k) {
    case InputKind::kColumn:
      return "column";
    case InputKind::kPairs:
      return "pairs";
    case InputKind::kAttention:
      return "attention q/k/v";
  }
  return "?";
}

const BackendEntry* Entry::Backend(const std::string& backend) const {
  for (const auto& b : backends)
    if (b.name == backend) return &b;
  return nullptr;
}

bool Register(const Entry& e) {
  if (!Map().emplace(e.name, e).second) {
    std::fprintf(stderr, "carrier: op '%s' registered twice\n", e.name.c_str());
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
  for (const auto& [k, v] : Map())
    if (v.user) out.push_back(k);
  return out;
}

std::string NamesSuffix() {
  std::string s;
  for (const auto& n : Names()) s += " " + n;
  return s;
}

std::vector<const Entry*> All() {
  std::vector<const Entry*> out;
  for (const auto& [k, v] : Map()) out.push_back(&v);
  std::stable_sort(out.begin(), out.end(), [](const Entry* a, const Entry* b) {
    if (a->user != b->user) return !a->user;
    if (a->rank != b->rank) return a->rank < b->rank;
    return a->name < b->name;
  });
  return out;
}

std::vector<std::string> TrialOps() {
  return NamesWhere([](const Entry& e) { return e.replay_oracle != nullptr; });
}
std::vector<std::string> LawsOps() {
  return NamesWhere([](const Entry& e) { return e.laws != nullptr; });
}
std::vector<std::string> DeriveOps() {
  return NamesWhere([](const Entry& e) { return e.derive != nullptr; });
}
std::vector<std::string> BackendOps(const std::string& backend) {
  return NamesWhere([&](const Entry& e) { return e.Backend(backend) != nullptr; });
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string Describe(const std::vector<std::string>& names, std::size_t indent) {
  std::size_t width = 0;
  for (const auto& n : names) width = std::max(width, n.size());
  std::string out;
  for (const auto& n : names) {
    const Entry* e = Find(n);
    out += std::string(indent, ' ') + n + std::string(width + 2 - n.size(), ' ');
    if (e) {
      out += e->summary;
      std::vector<std::string> b;
      for (const auto& be : e->backends) b.push_back(be.name);
      if (!b.empty()) out += " [" + Join(b) + "]";
    }
    out += "\n";
  }
  return out;
}

namespace {

// Words wrapped to lines of at most 96 columns, each indented.
std::string WrapWords(const std::string& text, std::size_t indent) {
  std::string out, line(indent, ' ');
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    if (line.size() + word.size() + 1 > 96 && line.size() > indent) {
      out += line + "\n";
      line = std::string(indent, ' ');
    }
    line += (line.size() > indent ? " " : "") + word;
    at = end + 1;
  }
  return out + line + "\n";
}

// Each entry: "SYNTAX" on its line, then "what (e.g. EXAMPLE)" wrapped below it.
template <class Doc>
std::string DocLines(const Doc* first, const Doc* last, std::size_t indent) {
  std::string out;
  for (const Doc* d = first; d != last; ++d)
    out += std::string(indent, ' ') + d->syntax + "\n" +
           WrapWords(std::string(d->what) + " (e.g. " + d->example + ")", indent + 4);
  return out;
}

// Names wrapped to lines of at most 96 columns, each indented.
std::string Wrapped(const std::vector<std::string>& names, std::size_t indent) {
  return WrapWords(Join(names, " "), indent);
}

std::string PresetLines(std::size_t indent) {
  std::vector<std::string> names;
  for (const auto& p : PrecisionPresets()) names.push_back(p.name);
  return Wrapped(names, indent);
}

}  // namespace

std::string ExpandHelp(const std::string& help) {
  std::vector<std::string> mixed, dims;
  for (const Entry* e : All()) {
    if (e->replay_mixed) mixed.push_back(e->name);
    for (auto d : e->head_dims) dims.push_back(std::to_string(d));
  }
  std::string named;
  for (const NamedComputeType& c : NamedComputeTypes()) named += c.name + " ";
  const std::pair<std::string, std::string> fills[] = {
      {"{TRIAL_OPS}", Describe(TrialOps(), 17)},
      {"{LAWS_OPS}", Describe(LawsOps(), 13)},
      {"{DERIVE_OPS}", Describe(DeriveOps(), 13)},
      {"{MIXED_OPS}", Join(mixed)},
      {"{HEAD_DIMS}", Join(dims, " or ")},
      {"{NAMED_ACC}", named},
      {"{SCHEDULES}", DocLines(std::begin(kScheduleKindDocs), std::end(kScheduleKindDocs), 17)},
      {"{GENERATORS}",
       DocLines(std::begin(inputs::kGeneratorDocs), std::end(inputs::kGeneratorDocs), 17)},
      {"{MMA_PROFILES}", Wrapped(MatrixUnitProfileNames(), 17)},
      {"{PRESETS}", PresetLines(17)},
  };
  std::string out = help;
  for (const auto& [key, value] : fills)
    for (auto at = out.find(key); at != std::string::npos; at = out.find(key, at + value.size()))
      out.replace(at, key.size(), value);
  return out;
}

const std::vector<NamedComputeType>& NamedComputeTypes() {
  static const std::vector<NamedComputeType> types = {
#if defined(CARRIER_HAVE_FLOAT128) && CARRIER_HAVE_FLOAT128
    {"fp128", "IEEE binary128 (Boost.Multiprecision float128, libquadmath), rne, replay only",
     ScalarKind::kFloat128, kFloat128Precision},
#endif
  };
  return types;
}

const NamedComputeType* FindComputeType(const std::string& name) {
  for (const NamedComputeType& c : NamedComputeTypes())
    if (c.name == name) return &c;
  return nullptr;
}

std::vector<std::string> BackendNames() { return {"replay", "simd", "omp", "cuda"}; }

}  // namespace carrier::registry

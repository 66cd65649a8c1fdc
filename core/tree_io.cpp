// core/tree_io.cpp: the JSON of merge trees, written and read with nlohmann-json (contract in
// core/tree_io.hpp). The one compiled file of core/ (library carrier_core_json): it keeps
// nlohmann's header out of every other translation unit, nvcc's included.
// Also ReadDotArithmetic (core/dot_arithmetic.hpp): a tree file's optional "dot_arithmetic".
#include "core/tree_io.hpp"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/dot_arithmetic.hpp"
#include "core/mma.hpp"

namespace carrier {

namespace {

constexpr int kMaxTreeJsonDepth = 64;

// ordered_json: members are visited in the document's order, so of several problems the first
// written is the one reported.
using Json = nlohmann::ordered_json;

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void Fail(const std::string& why) const {
    throw ScheduleError(origin_ + ": " + why);
  }

  std::uint64_t Unsigned(const Json& v, const std::string& what) const {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_float()) {
      // nlohmann reads an integer beyond 2^64 - 1 as a double.
      const double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && d >= 18446744073709551616.0)
        Fail(what + " is too large");
      Fail(what + " must be an integer");
    }
    Fail(what + " must be an unsigned integer");
  }
  std::string String(const Json& v, const std::string& what) const {
    if (!v.is_string()) Fail(what + " must be a string");
    return v.get<std::string>();
  }
  bool Bool(const Json& v, const std::string& what) const {
    if (!v.is_boolean()) Fail(what + " must be true or false");
    return v.get<bool>();
  }
  const Json& Object(const Json& v, const std::string& what) const {
    if (!v.is_object()) Fail(what + " must be an object {...}");
    return v;
  }
  const Json& Array(const Json& v, const std::string& what) const {
    if (!v.is_array()) Fail(what + " must be an array [...]");
    return v;
  }

 private:
  std::string origin_;
};

// The "fused" object: every key required, names as core/mma.hpp prints them.
MmaNode ReadFusedNode(const Reader& r, const Json& node) {
  MmaNode f;
  unsigned seen = 0;  // one bit per key
  auto name_of = [&](const std::string& text, const char* what, auto count, auto name) {
    for (int v = 0; v < count; ++v)
      if (name(v) == text) return v;
    std::string all;
    for (int v = 0; v < count; ++v) all += (v ? " " : "") + std::string(name(v));
    r.Fail(std::string("fused ") + what + " must be one of " + all + ", got '" + text + "'");
  };
  for (const auto& [k, v] : r.Object(node, "the fused node").items()) {
    if (k == "input") {
      f.input = static_cast<MmaInput>(
          name_of(r.String(v, "fused input"), "input", kMmaInputCount,
                  [](int x) { return MmaInputName(static_cast<MmaInput>(x)); }));
      seen |= 1;
    } else if (k == "terms") {
      const std::uint64_t terms = r.Unsigned(v, "fused terms");
      if (terms < 1 || terms > kMmaMaxTerms)
        r.Fail("fused terms must be in [1, " + std::to_string(kMmaMaxTerms) + "], got " +
               std::to_string(terms));
      f.terms = static_cast<std::uint32_t>(terms);
      seen |= 2;
    } else if (k == "frac_bits") {
      const std::uint64_t bits = r.Unsigned(v, "fused frac_bits");
      if (bits > 35) r.Fail("fused frac_bits must be in [0, 35], got " + std::to_string(bits));
      f.frac_bits = static_cast<std::int32_t>(bits);
      seen |= 4;
    } else if (k == "align") {
      const std::string a = r.String(v, "fused align");
      if (a != "truncate" && a != "floor")
        r.Fail("fused align must be truncate or floor, got '" + a + "'");
      f.align = a == "floor" ? MmaAlign::kFloor : MmaAlign::kTruncate;
      seen |= 8;
    } else if (k == "output") {
      f.output =
          static_cast<MmaOutput>(name_of(r.String(v, "fused output"), "output", 4, [](int x) {
            return MmaOutputName(static_cast<MmaOutput>(x));
          }));
      seen |= 16;
    } else if (k == "two_stage") {
      f.two_stage = r.Bool(v, "fused two_stage");
      seen |= 32;
    } else if (k == "group") {
      const std::uint64_t group = r.Unsigned(v, "fused group");
      if (group != 0 && group != 16)
        r.Fail("fused group must be 0 or 16, got " + std::to_string(group));
      f.group = static_cast<std::uint32_t>(group);
    } else {
      r.Fail("the fused node has unknown key '" + k +
             "' (input terms frac_bits align output two_stage group)");
    }
  }
  if (seen != 63)
    r.Fail("the fused node needs all of input terms frac_bits align output two_stage");
  // The integer sums are exact for F <= 25, and for F <= 35 in a group node (core/mma.hpp).
  if (f.group == 0 && f.frac_bits > 25)
    r.Fail("fused frac_bits above 25 needs a group node (\"group\": 16), got " +
           std::to_string(f.frac_bits));
  if (f.group != 0 && (f.input != MmaInput::kFp4E2m1 || f.two_stage))
    r.Fail("a fused group node takes fp4e2m1 input in one stage");
  return f;
}

Chain ReadChain(const Reader& r, const Json& node, std::size_t index) {
  const std::string name = "chain " + std::to_string(index);
  Chain c;
  bool have_first = false, have_count = false;
  for (const auto& [k, v] : r.Object(node, name).items()) {
    if (k == "first") {
      c.first = r.Unsigned(v, "chain first");
      have_first = true;
    } else if (k == "count") {
      c.count = r.Unsigned(v, "chain count");
      have_count = true;
    } else if (k == "stride") {
      c.stride = r.Unsigned(v, "chain stride");
    } else if (k == "mode") {
      const std::string m = r.String(v, "chain mode");
      if (m != "push" && m != "tile" && m != "fused")
        r.Fail("chain mode must be push, tile or fused, got '" + m + "'");
      c.mode = m == "tile"    ? ChainMode::kLiftTile
               : m == "fused" ? ChainMode::kFused
                              : ChainMode::kPush;
    } else {
      r.Fail(name + " has unknown key '" + k + "' (first count stride mode)");
    }
  }
  if (!have_first || !have_count) r.Fail(name + " needs first and count");
  return c;
}

// nlohmann's parse_error text without its "[json.exception.parse_error.N] " tag.
std::string ParseErrorText(const nlohmann::json::parse_error& e) {
  const std::string what = e.what();
  const std::size_t tag = what.find("] ");
  return tag == std::string::npos ? what : what.substr(tag + 2);
}

}  // namespace

MergeTree TreeFromJson(std::string_view text, const std::string& origin) {
  const Reader r(origin);
  Json doc;
  try {
    // A tree is three levels deep (object, chains array, chain object); anything nested past
    // kMaxTreeJsonDepth is refused while parsing, before a deep value is built (a file nested
    // 100,000 deep under an unknown key overflowed the stack).
    const Json::parser_callback_t limit_depth = [&](int depth, Json::parse_event_t event, Json&) {
      if ((event == Json::parse_event_t::object_start ||
           event == Json::parse_event_t::array_start) &&
          depth >= kMaxTreeJsonDepth)
        r.Fail("nested deeper than " + std::to_string(kMaxTreeJsonDepth) +
               " levels (a merge tree needs 4)");
      return true;
    };
    doc = Json::parse(text.begin(), text.end(), limit_depth);
  } catch (const nlohmann::json::parse_error& e) {
    const std::string why = ParseErrorText(e);
    if (why.find("; expected end of input") != std::string::npos)
      r.Fail("trailing text after the tree object (at byte " + std::to_string(e.byte) + ")");
    r.Fail("not valid JSON at byte " + std::to_string(e.byte) + ": " + why);
  } catch (const nlohmann::json::exception& e) {
    // out_of_range 406, a number beyond a double (1e999): found by fuzz_tree_json.
    const std::string what = e.what();
    const std::size_t tag = what.find("] ");
    r.Fail("not valid JSON: " + (tag == std::string::npos ? what : what.substr(tag + 2)));
  }
  MergeTree t;
  bool have_n = false, have_chains = false, have_combines = false, have_permutes = false,
       have_fused = false;
  for (const auto& [key, v] : r.Object(doc, "the tree").items()) {
    if (key == "n") {
      t.n = r.Unsigned(v, "n");
      have_n = true;
    } else if (key == "schedule") {
      t.schedule = r.String(v, "schedule");
    } else if (key == "permutes") {
      t.permutes = r.Bool(v, "permutes");
      have_permutes = true;
    } else if (key == "chains") {
      have_chains = true;
      t.chains.clear();
      for (const Json& c : r.Array(v, "chains"))
        t.chains.push_back(ReadChain(r, c, t.chains.size()));
    } else if (key == "combines") {
      have_combines = true;
      t.combines.clear();
      for (const Json& c : r.Array(v, "combines")) {
        if (!c.is_array() || c.size() != 2)
          r.Fail("combine " + std::to_string(t.combines.size()) + " must be [LEFT, RIGHT]");
        CombineOp op;
        op.left = r.Unsigned(c[0], "combine operand");
        op.right = r.Unsigned(c[1], "combine operand");
        t.combines.push_back(op);
      }
    } else if (key == "fused") {
      have_fused = true;
      t.fused = ReadFusedNode(r, v);
    }  // "stats" and any other key: derived data, skipped
  }
  if (have_fused != t.UsesFusedNode())
    r.Fail(have_fused ? "a \"fused\" node is given but no chain has mode fused"
                      : "a chain has mode fused but the \"fused\" node is missing");
  if (!have_n) r.Fail("missing key \"n\"");
  if (!have_chains) r.Fail("missing key \"chains\"");
  if (!have_combines) r.Fail("missing key \"combines\"");
  if (!have_permutes) {
    t.permutes = false;
    if (!ValidateTree(t).empty()) {
      t.permutes = true;  // inferred: only interleaving can be fixed by declaring it
      if (!ValidateTree(t).empty()) t.permutes = false;
    }
  }
  if (std::string why = ValidateTree(t); !why.empty())
    throw ScheduleError(origin + ": not a valid merge tree: " + why);
  return t;
}

std::optional<DotArithmetic> ReadDotArithmetic(std::string_view text, const std::string& origin,
                                               std::uint64_t nodes) {
  const Reader r(origin);
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    r.Fail(std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("dot_arithmetic")) return std::nullopt;
  DotArithmetic a;
  bool have_format = false, have_push = false;
  for (const auto& [k, v] : r.Object(doc["dot_arithmetic"], "dot_arithmetic").items()) {
    if (k == "format") {
      const std::string f = r.String(v, "dot_arithmetic format");
      if (f != "fp32" && f != "fp64")
        r.Fail("dot_arithmetic format must be fp32 or fp64, got '" + f + "'");
      a.fp32 = f == "fp32";
      have_format = true;
    } else if (k == "push") {
      const std::string p = r.String(v, "dot_arithmetic push");
      if (p != "mul-add" && p != "fma" && p != "per-input")
        r.Fail("dot_arithmetic push must be mul-add, fma or per-input, got '" + p + "'");
      a.push = p == "fma"         ? DotPush::kFma
               : p == "per-input" ? DotPush::kPerInput
                                  : DotPush::kMulAdd;
      have_push = true;
    } else if (k == "fp64_products") {
      const std::string p = r.String(v, "dot_arithmetic fp64_products");
      if (p != "fp32" && p != "exact")
        r.Fail("dot_arithmetic fp64_products must be fp32 or exact, got '" + p + "'");
      a.wide_products = p == "exact" ? WideProducts::kExact : WideProducts::kRounded;
    } else if (k == "fused_inputs") {
      for (const Json& id : r.Array(v, "dot_arithmetic fused_inputs")) {
        const std::uint64_t input = r.Unsigned(id, "a fused input");
        if (input >= (std::uint64_t{1} << 40)) r.Fail("dot_arithmetic fused input out of range");
        if (a.fused.size() <= input) a.fused.resize(input + 1, 0);
        a.fused[input] = 1;
      }
    } else if (k == "fp64_nodes") {
      a.wide.assign(nodes, 0);
      for (const Json& id : r.Array(v, "dot_arithmetic fp64_nodes")) {
        const std::uint64_t node = r.Unsigned(id, "an fp64 node");
        if (node >= nodes)
          r.Fail("dot_arithmetic names fp64 node " + std::to_string(node) + ", but the tree has " +
                 std::to_string(nodes) + " nodes");
        a.wide[node] = 1;
      }
    } else {
      r.Fail("dot_arithmetic has unknown key '" + k +
             "' (format push fused_inputs fp64_nodes fp64_products)");
    }
  }
  if (!have_format || !have_push) r.Fail("dot_arithmetic needs format and push");
  return a;
}

std::string ToJson(const MergeTree& t) {
  // Numbers as the stream prints them (mean_leaf_depth with its default six significant
  // digits), so the text is what it was before nlohmann; strings through nlohmann's escaping
  // (a bad UTF-8 byte becomes U+FFFD), so it is valid JSON whatever the schedule text holds.
  auto quote = [](std::string_view s) {
    return nlohmann::json(std::string(s))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  const TreeStats st = ComputeStats(t);
  std::ostringstream os;
  os << "{\"schedule\":" << quote(t.schedule) << ",\"n\":" << t.n
     << ",\"permutes\":" << (t.permutes ? "true" : "false")
     << ",\"stats\":{\"chains\":" << st.chains << ",\"combines\":" << st.combines
     << ",\"longest_chain\":" << st.longest_chain << ",\"combine_depth\":" << st.combine_depth
     << ",\"max_leaf_depth\":" << st.max_leaf_depth << ",\"mean_leaf_depth\":" << st.mean_leaf_depth
     << "},\"chains\":[";
  for (std::uint64_t k = 0; k < t.chains.size(); ++k) {
    const Chain& c = t.chains[k];
    os << (k ? "," : "") << "{\"first\":" << c.first << ",\"count\":" << c.count
       << ",\"stride\":" << c.stride << ",\"mode\":\""
       << (c.mode == ChainMode::kLiftTile ? "tile"
           : c.mode == ChainMode::kFused  ? "fused"
                                          : "push")
       << "\"}";
  }
  os << "]";
  if (t.UsesFusedNode())
    os << ",\"fused\":{\"input\":" << quote(MmaInputName(t.fused.input))
       << ",\"terms\":" << t.fused.terms << ",\"frac_bits\":" << t.fused.frac_bits
       << ",\"align\":\"" << (t.fused.align == MmaAlign::kFloor ? "floor" : "truncate")
       << "\",\"output\":" << quote(MmaOutputName(t.fused.output))
       << ",\"two_stage\":" << (t.fused.two_stage ? "true" : "false")
       << (t.fused.group ? ",\"group\":" + std::to_string(t.fused.group) : std::string()) << "}";
  os << ",\"combines\":[";
  for (std::uint64_t m = 0; m < t.combines.size(); ++m)
    os << (m ? "," : "") << "[" << t.combines[m].left << "," << t.combines[m].right << "]";
  os << "]}\n";
  return os.str();
}

}  // namespace carrier

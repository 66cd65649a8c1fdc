// core/tree_io.hpp: read a merge tree back from the JSON that ToJson writes (file:PATH).
//
// Format (ToJson in core/merge_tree.hpp; `carrier tree --format json`, `carrier probe`):
//   {"schedule": TEXT, "n": N, "permutes": BOOL,
//    "chains": [{"first": F, "count": C, "stride": S, "mode": "push"|"tile"|"fused"}, ...],
//    "fused": {"input": "fp16"|"bf16"|"tf32"|"fp8e4m3", "terms": K, "frac_bits": F,
//              "align": "truncate"|"floor", "output": "fp32-rz"|"e8m13-rz"|"fp16-rne"|
//              "fp32-rne", "two_stage": BOOL},
//    "combines": [[LEFT, RIGHT], ...], ...}
// Keys may come in any order; "stats" and any other unknown top-level key are skipped (they
// are derived data); unknown keys inside a chain are an error, since they would change its
// meaning (a fused node's parameters, say) and must not be ignored silently. "permutes" may
// be left out: it is then inferred (true exactly when some combine merges interleaved
// inputs). "stride" defaults to 1 and "mode" to "push". Integers are unsigned decimal.
// "fused" is the matrix-unit node of the "fused" chains (MergeTree::fused, core/mma.hpp): it
// is required exactly when some chain is fused (a fused chain without its node's arithmetic
// has no meaning; a node without fused chains would be dropped on writing), all six keys must
// be given, and K must lie in [1, kMmaMaxTerms] and F in [0, 25] (the range where
// MmaFusedStep's integer sum is exact). So every tree ToJson writes reads back as itself.
//
// TreeFromJson(text, origin) parses and validates (ValidateTree: every input in exactly one
// chain and in range, every node consumed once, operands computed before use, operand order
// preserved); every problem is one ScheduleError line naming `origin` and what is wrong.
// LoadTreeFile(path, n) reads the file, checks that its tree is over n inputs, and names the
// tree's schedule "file:PATH", so a trial that replays it reports where its order came from.
#pragma once

#include <cctype>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/mma.hpp"

namespace carrier {

namespace tree_io_detail {

class JsonReader {
 public:
  JsonReader(std::string_view text, std::string origin) : s_(text), origin_(std::move(origin)) {}

  [[noreturn]] void Fail(const std::string& why) const {
    throw ScheduleError(origin_ + ": " + why + " (at byte " + std::to_string(pos_) + ")");
  }
  void Ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Peek(char c) {
    Ws();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void Expect(char c) {
    if (!Peek(c)) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool AtEnd() {
    Ws();
    return pos_ >= s_.size();
  }
  std::string String() {
    Expect('"');
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\') {
        if (++pos_ >= s_.size()) break;
        const char e = s_[pos_];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e;  // \" \\ \/ and the rest kept literally
      } else {
        out += s_[pos_];
      }
      ++pos_;
    }
    if (pos_ >= s_.size()) Fail("unterminated string");
    ++pos_;
    return out;
  }
  std::uint64_t Unsigned(const char* what) {
    Ws();
    const std::size_t start = pos_;
    std::uint64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      const std::uint64_t d = static_cast<std::uint64_t>(s_[pos_] - '0');
      if (v > (UINT64_MAX - d) / 10) Fail(std::string(what) + " is too large");
      v = v * 10 + d;
      ++pos_;
    }
    if (pos_ == start) Fail(std::string(what) + " must be an unsigned integer");
    if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E'))
      Fail(std::string(what) + " must be an integer");
    return v;
  }
  bool Bool() {
    Ws();
    if (s_.substr(pos_, 4) == "true") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "false") {
      pos_ += 5;
      return false;
    }
    Fail("expected true or false");
  }
  // Skips any JSON value (for derived keys such as "stats").
  void Skip() {  // NOLINT(misc-no-recursion)
    Ws();
    if (pos_ >= s_.size()) Fail("unexpected end of input");
    const char c = s_[pos_];
    if (c == '"') {
      String();
    } else if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++pos_;
      if (Peek(close)) {
        ++pos_;
        return;
      }
      while (true) {
        if (c == '{') {
          String();
          Expect(':');
        }
        Skip();
        if (Peek(',')) {
          ++pos_;
          continue;
        }
        Expect(close);
        return;
      }
    } else {
      const std::size_t start = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                  s_[pos_] == '-' || s_[pos_] == '+' || s_[pos_] == '.'))
        ++pos_;
      if (pos_ == start) Fail(std::string("unexpected character '") + c + "'");
    }
  }
  // Calls item() for each element of an array.
  template <class F>
  void Array(F&& item) {
    Expect('[');
    if (Peek(']')) {
      ++pos_;
      return;
    }
    while (true) {
      item();
      if (Peek(',')) {
        ++pos_;
        continue;
      }
      Expect(']');
      return;
    }
  }
  // Calls member(key) for each member of an object; member reads the value.
  template <class F>
  void Object(F&& member) {
    Expect('{');
    if (Peek('}')) {
      ++pos_;
      return;
    }
    while (true) {
      const std::string key = String();
      Expect(':');
      member(key);
      if (Peek(',')) {
        ++pos_;
        continue;
      }
      Expect('}');
      return;
    }
  }

 private:
  std::string_view s_;
  std::string origin_;
  std::size_t pos_ = 0;
};

// The "fused" object: every key required, names as core/mma.hpp prints them.
inline MmaNode ReadFusedNode(JsonReader& r) {
  MmaNode f;
  unsigned seen = 0;  // one bit per key
  auto name_of = [&](const std::string& text, const char* what, auto count, auto name) {
    for (int v = 0; v < count; ++v)
      if (name(v) == text) return v;
    std::string all;
    for (int v = 0; v < count; ++v) all += (v ? " " : "") + std::string(name(v));
    r.Fail(std::string("fused ") + what + " must be one of " + all + ", got '" + text + "'");
  };
  r.Object([&](const std::string& k) {
    if (k == "input") {
      f.input = static_cast<MmaInput>(name_of(
          r.String(), "input", 4, [](int v) { return MmaInputName(static_cast<MmaInput>(v)); }));
      seen |= 1;
    } else if (k == "terms") {
      const std::uint64_t terms = r.Unsigned("fused terms");
      if (terms < 1 || terms > kMmaMaxTerms)
        r.Fail("fused terms must be in [1, " + std::to_string(kMmaMaxTerms) + "], got " +
               std::to_string(terms));
      f.terms = static_cast<std::uint32_t>(terms);
      seen |= 2;
    } else if (k == "frac_bits") {
      const std::uint64_t bits = r.Unsigned("fused frac_bits");
      if (bits > 25) r.Fail("fused frac_bits must be in [0, 25], got " + std::to_string(bits));
      f.frac_bits = static_cast<std::int32_t>(bits);
      seen |= 4;
    } else if (k == "align") {
      const std::string a = r.String();
      if (a != "truncate" && a != "floor")
        r.Fail("fused align must be truncate or floor, got '" + a + "'");
      f.align = a == "floor" ? MmaAlign::kFloor : MmaAlign::kTruncate;
      seen |= 8;
    } else if (k == "output") {
      f.output = static_cast<MmaOutput>(name_of(
          r.String(), "output", 4, [](int v) { return MmaOutputName(static_cast<MmaOutput>(v)); }));
      seen |= 16;
    } else if (k == "two_stage") {
      f.two_stage = r.Bool();
      seen |= 32;
    } else {
      r.Fail("the fused node has unknown key '" + k +
             "' (input terms frac_bits align output two_stage)");
    }
  });
  if (seen != 63)
    r.Fail("the fused node needs all of input terms frac_bits align output two_stage");
  return f;
}

}  // namespace tree_io_detail

inline MergeTree TreeFromJson(std::string_view text, const std::string& origin) {
  tree_io_detail::JsonReader r(text, origin);
  MergeTree t;
  bool have_n = false, have_chains = false, have_combines = false, have_permutes = false,
       have_fused = false;
  r.Object([&](const std::string& key) {
    if (key == "n") {
      t.n = r.Unsigned("n");
      have_n = true;
    } else if (key == "schedule") {
      t.schedule = r.String();
    } else if (key == "permutes") {
      t.permutes = r.Bool();
      have_permutes = true;
    } else if (key == "chains") {
      have_chains = true;
      r.Array([&] {
        Chain c;
        bool have_first = false, have_count = false;
        r.Object([&](const std::string& k) {
          if (k == "first") {
            c.first = r.Unsigned("chain first");
            have_first = true;
          } else if (k == "count") {
            c.count = r.Unsigned("chain count");
            have_count = true;
          } else if (k == "stride") {
            c.stride = r.Unsigned("chain stride");
          } else if (k == "mode") {
            const std::string m = r.String();
            if (m != "push" && m != "tile" && m != "fused")
              r.Fail("chain mode must be push, tile or fused, got '" + m + "'");
            c.mode = m == "tile"    ? ChainMode::kLiftTile
                     : m == "fused" ? ChainMode::kFused
                                    : ChainMode::kPush;
          } else {
            r.Fail("chain " + std::to_string(t.chains.size()) + " has unknown key '" + k +
                   "' (first count stride mode)");
          }
        });
        if (!have_first || !have_count)
          r.Fail("chain " + std::to_string(t.chains.size()) + " needs first and count");
        t.chains.push_back(c);
      });
    } else if (key == "combines") {
      have_combines = true;
      r.Array([&] {
        CombineOp op;
        r.Expect('[');
        op.left = r.Unsigned("combine operand");
        r.Expect(',');
        op.right = r.Unsigned("combine operand");
        r.Expect(']');
        t.combines.push_back(op);
      });
    } else if (key == "fused") {
      have_fused = true;
      t.fused = tree_io_detail::ReadFusedNode(r);
    } else {
      r.Skip();
    }
  });
  if (!r.AtEnd()) r.Fail("trailing text after the tree object");
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

inline MergeTree LoadTreeFile(const std::string& path, std::uint64_t n) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ScheduleError("file:" + path + ": cannot open the tree file");
  std::ostringstream ss;
  ss << f.rdbuf();
  MergeTree t = TreeFromJson(ss.str(), "file:" + path);
  if (t.n != n)
    throw ScheduleError("file:" + path + ": the tree is over n = " + std::to_string(t.n) +
                        " inputs, but the input has " + std::to_string(n));
  t.schedule = "file:" + path;
  return t;
}

}  // namespace carrier

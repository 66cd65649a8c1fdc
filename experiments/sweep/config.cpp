#include "sweep/config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "cli/args.hpp"
#include "core/hash.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR && defined(CARRIER_HAVE_TOMLPP) && \
    CARRIER_HAVE_TOMLPP
#define CARRIER_SWEEP_CONFIG 1
// toml++ 3.3.0 checks its parser's invariants with TOML_ASSERT_ASSUME: assert() without NDEBUG,
// __builtin_assume with NDEBUG on clang (undefined behaviour when false), nothing on GCC 12.
// Some fail on malformed text (tests/fuzz/fuzz_sweep_config found '[[=' and a value that starts
// at a terminator), where the code right after them reports a parse error. Included with
// TOML_ASSERT a no-op and NDEBUG unset, every build behaves as the GCC release build does: a
// parse error (ConfigError), no abort, nothing assumed.
#pragma push_macro("NDEBUG")
#undef NDEBUG
#define TOML_ASSERT(expr) static_assert(true)
#include <toml++/toml.h>
#pragma pop_macro("NDEBUG")

#include "core/schedule.hpp"
#include "inputs/generators.hpp"
#include "io/tree_file.hpp"
#include "precision/block_scaled.hpp"
#include "precision/format.hpp"
#include "precision/precision_policy.hpp"
#include "precision/rounding.hpp"
#include "registry/registry.hpp"
#include "run/matmul.hpp"
#include "run/trial.hpp"
#endif

namespace carrier::sweep {

namespace {

std::uint64_t Fnv1a(const std::string& s, std::uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::uint64_t ParseRangeNumber(const std::string& t, const std::string& whole) {
  auto v = cli::ParseCountText(t);
  if (!v)
    throw std::invalid_argument("range '" + whole + "': '" + t +
                                "' is not a non-negative integer (123, 1e6 or 2^20)");
  return *v;
}

std::string Trim(std::string s) {
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

std::string ConfigHash(const std::string& text) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(Fnv1a(text)));
  return buf;
}

std::uint64_t InputSeed(std::uint64_t base, const std::string& input, std::uint64_t n,
                        std::uint64_t head_dim, std::uint64_t trial) {
  std::uint64_t h = Fnv1a(input, SplitMix64(base));
  h = SplitMix64(h ^ SplitMix64(n));
  h = SplitMix64(h ^ SplitMix64(head_dim + 0x100));
  return SplitMix64(h ^ SplitMix64(trial + 0x10000)) >> 1;  // below 2^63: prints the same as signed
}

std::vector<std::string> ExpandRange(const std::string& text) {
  const auto open = text.find('{');
  if (open == std::string::npos) {
    if (text.find('}') != std::string::npos)
      throw std::invalid_argument("'" + text + "' has a '}' without '{'");
    return {text};
  }
  const auto close = text.find('}', open);
  if (close == std::string::npos) throw std::invalid_argument("range in '" + text + "' has no '}'");
  if (text.find('{', close) != std::string::npos)
    throw std::invalid_argument("'" + text + "' holds more than one range");
  const std::string inner = text.substr(open + 1, close - open - 1);
  const auto dots = inner.find("..");
  if (dots == std::string::npos)
    throw std::invalid_argument("range '{" + inner +
                                "}' needs the form {A..B}, {A..B by +S} or "
                                "{A..B by xF}");
  const std::string a_text = Trim(inner.substr(0, dots));
  std::string rest = inner.substr(dots + 2);
  std::string b_text = rest, step_text;
  const auto by = rest.find(" by ");
  if (by != std::string::npos) {
    b_text = rest.substr(0, by);
    step_text = Trim(rest.substr(by + 4));
  }
  const std::uint64_t a = ParseRangeNumber(Trim(a_text), text);
  const std::uint64_t b = ParseRangeNumber(Trim(b_text), text);
  if (b < a) throw std::invalid_argument("range '" + text + "' ends below its start");
  bool geometric = false;
  std::uint64_t step = 1;
  if (!step_text.empty()) {
    if (step_text[0] == 'x' || step_text[0] == '*') {
      geometric = true;
      step = ParseRangeNumber(step_text.substr(1), text);
      if (step < 2 || a == 0)
        throw std::invalid_argument("range '" + text +
                                    "': a geometric step xF needs F >= 2 and "
                                    "a start >= 1");
    } else {
      step = ParseRangeNumber(step_text[0] == '+' ? step_text.substr(1) : step_text, text);
      if (step == 0) throw std::invalid_argument("range '" + text + "': step must be >= 1");
    }
  }
  std::vector<std::string> out;
  const std::string pre = text.substr(0, open), post = text.substr(close + 1);
  for (std::uint64_t v = a; v <= b;) {
    out.push_back(pre + std::to_string(v) + post);
    if (out.size() > 100000)
      throw std::invalid_argument("range '" + text + "' has over 10^5 values");
    const std::uint64_t next = geometric ? v * step : v + step;
    if (next <= v) break;  // overflow
    v = next;
  }
  return out;
}

#if defined(CARRIER_SWEEP_CONFIG)

namespace {

const std::map<std::string, std::vector<std::string>>& GridDefaults() {
  static const std::map<std::string, std::vector<std::string>> d = {
      {"acc", {"same"}},       {"round", {"rne"}},   {"exp", {"libm"}},  {"schedule", {"seq"}},
      {"backend", {"replay"}}, {"head_dim", {"64"}}, {"precision", {""}}};
  return d;
}

// Whether op runs a precision policy role by role (its entry's policy_replay: attention).
bool RunsRoles(const std::string& op) {
  const registry::Entry* e = registry::Find(op);
  return e && e->policy_replay;
}

// The (dtype, acc, round) a precision value is listed under for op, as ResolveTrial lists it
// (eval's --precision, the same table and the same messages): an op that runs every role, the
// policy's in, acc and acc's rounding; any other op, the shorthand the policy stands for
// (ToShorthand). Throws std::invalid_argument (one line) for a bad policy or one the op cannot
// run.
ShorthandSpec PrecisionShorthand(const std::string& text, const std::string& op_name) {
  PrecisionPolicy p = ParsePrecisionPolicy(text);
  const std::string op = op_name == run::kMatmulOp ? "dot" : op_name;  // its outputs are dots
  if (!p.split.empty() && RunsRoles(op))
    throw std::invalid_argument("split=" + p.split + " applies to op dot and " + run::kMatmulOp +
                                ", not op " + op_name);
  if (RunsRoles(op))
    return {p.in.format.name, p.acc.format.name, std::string(RoundingName(p.acc.rounding)), ""};
  const registry::Entry* entry = registry::Find(op);
  if (entry && entry->fused_schedules && (!p.mma.empty() || !p.split.empty())) {
    // dot runs mma= as its mma:PROFILE order and split= as partial dots (run/resolve.cpp
    // ApplyPolicy): its checks, as eval meets them, then the shorthand of the rest.
    run::TrialSpec spec;
    spec.op = op;
    spec.precision = p;
    try {
      run::ResolveTrial(spec);
    } catch (const run::SpecError& err) {
      throw std::invalid_argument(std::string(err.what()) + " (op " + op_name + ")");
    }
    p.mma.clear();
    p.split.clear();
  } else if (!p.split.empty()) {
    throw std::invalid_argument("split=" + p.split + " applies to op dot and " + run::kMatmulOp +
                                ", not op " + op_name);
  } else if (!p.mma.empty()) {
    std::vector<std::string> fused;
    for (const registry::Entry* f : registry::All())
      if (f->fused_schedules || f->policy_replay) fused.push_back(f->name);
    throw std::invalid_argument(
        "mma=" + p.mma + " (a matrix unit) applies to matrix products (op " +
        registry::Join(fused) + " " + run::kMatmulOp + "), not op " + op_name);
  }
  try {
    return ToShorthand(p);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(e.what()) + " (op " + op +
                                "; every role: op attention)");
  }
}

// Whether the grid's mn applies to op (matmul).
bool TakesMn(const std::string& op) { return op == run::kMatmulOp; }

// Whether the grid's head_dim applies to op (its entry has head dims: attention).
bool TakesHeadDim(const std::string& op) {
  const registry::Entry* e = registry::Find(op);
  return e && !e->head_dims.empty();
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

struct Checker {
  std::string path;
  [[noreturn]] void Fail(const std::string& key, const std::string& value,
                         const std::string& why) const {
    throw ConfigError("carrier sweep: " + path + ": " + key + " = '" + value + "': " + why);
  }
};

// Checks one value of one grid key on its own; throws via Fail with the allowed values.
void CheckValue(const Checker& c, const std::string& key, const std::string& v) {
  const std::string k = "[grid] " + key;
  if (key == "precision") {
    try {
      ParsePrecisionPolicy(v);  // whether each op can run it: ParseConfig, once ops are known
    } catch (const std::invalid_argument& e) {
      c.Fail(k, v, e.what());
    }
  } else if (key == "op") {
    auto ops = registry::TrialOps();  // the op table's, user carriers included
    ops.push_back(run::kMatmulOp);    // M N dots of length n (run/matmul.hpp)
    if (std::find(ops.begin(), ops.end(), v) == ops.end())
      c.Fail(k, v, "unknown op; allowed: " + Join(ops) + registry::MainJobOpsNote());
  } else if (key == "dtype") {
    try {
      if (LooksBlockScaled(v)) {
        ParseBlockScaledFormat(v);  // block-scaled storage (precision/block_scaled.hpp)
      } else {
        ParseFormat(v);
      }
    } catch (const std::exception& e) {
      c.Fail(k, v,
             std::string(e.what()) +
                 "; allowed: fp8e4m3 fp8e4m3sat fp8e5m2 fp16 bf16 tf32 fp32 fp64 custom:... or "
                 "a block-scaled format (mxfp8e4m3 ... nvfp4, mx:...)");
    }
  } else if (key == "acc") {
    if (v == "same") return;
    if (const auto gt = v.find('>'); gt != std::string::npos) {
      // Two-level "INNER>OUTER" (FORMAT.md): each side alone must be a compute type; whether
      // the pair and the op can run is the trial's question (a failed row).
      const std::string in = v.substr(0, gt), out = v.substr(gt + 1);
      if (in.empty() || out.empty() || out.find('>') != std::string::npos)
        c.Fail(k, v, "two-level acc is INNER>OUTER, e.g. fp16>fp32");
      for (const std::string& side : {in, out}) {
        if (side == "same" || side.rfind("mpfr:", 0) == 0 || registry::FindComputeType(side))
          continue;
        try {
          ParseFormat(side);
        } catch (const std::exception& e) {
          c.Fail(k, v,
                 std::string(e.what()) + "; each side of INNER>OUTER: same, a dtype, or mpfr:BITS");
        }
      }
      return;
    }
    if (registry::FindComputeType(v)) return;  // fp128 (registry::NamedComputeTypes)
    if (v.rfind("mpfr:", 0) == 0) {
      auto bits = cli::ParseCountText(v.substr(5));
      if (!bits || *bits < 2 || *bits > (1u << 20))
        c.Fail(k, v, "mpfr:BITS needs BITS between 2 and 2^20");
      return;
    }
    try {
      ParseFormat(v);
    } catch (const std::exception& e) {
      std::string named;
      for (const auto& t : registry::NamedComputeTypes()) named += t.name + ", ";
      c.Fail(k, v, std::string(e.what()) + "; allowed: same, a dtype, " + named + "or mpfr:BITS");
    }
  } else if (key == "round") {
    try {
      ParseRounding(v);
    } catch (const std::exception&) {
      c.Fail(k, v, "allowed: rne rna rz ru rd ro sr");
    }
  } else if (key == "exp") {
    const auto& exps = registry::ExpNames();
    if (std::find(exps.begin(), exps.end(), v) == exps.end())
      c.Fail(k, v, "allowed: " + Join(exps));
  } else if (key == "schedule") {
    AdaptiveOrder order;  // increasing | decreasing | insertion | psum: per input
    try {
      if (!ParseAdaptiveOrder(v, order)) ParseSchedule(v);
    } catch (const std::exception& e) {
      c.Fail(k, v, std::string(e.what()) + "; allowed: " + kScheduleGrammar);
    }
    // A saved tree is read now: a missing, unreadable or invalid file is a config error, not a
    // failed row per trial (FORMAT.md).
    if (v.rfind("file:", 0) == 0) {
      try {
        io::ReadTreeFile(v.substr(5), v);
      } catch (const std::exception& e) {
        c.Fail(k, v, e.what());
      }
    }
  } else if (key == "backend") {
    const auto backends = registry::BackendNames();
    if (std::find(backends.begin(), backends.end(), v) == backends.end())
      c.Fail(k, v, "allowed: " + Join(backends));
  } else if (key == "n") {
    auto n = cli::ParseCountText(v);
    // 2^30: run/memory.hpp's kMaxTrialN (what memory allows is checked when the sweep runs)
    if (!n || *n < 1 || *n > (std::uint64_t{1} << 30))
      c.Fail(k, v, "n must be an integer from 1 to 2^30 (123, 1e6, 2^20 or a range)");
  } else if (key == "input") {
    try {
      inputs::ParseGenerator(v);
    } catch (const std::exception& e) {
      c.Fail(k, v, e.what());
    }
  } else if (key == "mn") {
    const auto x = v.find('x');
    const auto m = x == std::string::npos ? std::nullopt : cli::ParseCountText(v.substr(0, x));
    const auto n = x == std::string::npos ? std::nullopt : cli::ParseCountText(v.substr(x + 1));
    const std::uint64_t most = std::uint64_t{1} << 30;
    if (!m || !n || *m < 1 || *n < 1 || *m > most || *n > most || *m * *n > most)
      c.Fail(k, v, "mn is MxN (op matmul's M and N, e.g. 512x512; M N at most 2^30)");
  } else if (key == "head_dim") {
    std::vector<std::string> dims;
    for (const registry::Entry* e : registry::All())
      for (auto d : e->head_dims)
        if (std::find(dims.begin(), dims.end(), std::to_string(d)) == dims.end())
          dims.push_back(std::to_string(d));
    if (std::find(dims.begin(), dims.end(), v) == dims.end())
      c.Fail(k, v, "allowed: " + Join(dims));
  }
}

// One TOML value (or array of them) of a grid or exclude key -> expanded texts.
std::vector<std::string> Values(const Checker& c, const std::string& where,
                                const toml::node& node) {
  std::vector<const toml::node*> items;
  if (const auto* arr = node.as_array()) {
    for (const auto& e : *arr) items.push_back(&e);
    if (items.empty()) c.Fail(where, "[]", "an empty list; give at least one value");
  } else {
    items.push_back(&node);
  }
  std::vector<std::string> out;
  for (const toml::node* it : items) {
    std::string text;
    if (auto s = it->value_exact<std::string>()) {
      text = *s;
    } else if (auto i = it->value_exact<std::int64_t>()) {
      if (*i < 0) c.Fail(where, std::to_string(*i), "must not be negative");
      text = std::to_string(*i);
    } else if (auto f = it->value_exact<double>()) {
      if (!(*f >= 0) || *f != std::floor(*f) || *f > 9.0e15)
        c.Fail(where, std::to_string(*f), "a number here must be a non-negative integer");
      text = std::to_string(static_cast<std::uint64_t>(*f));
    } else {
      c.Fail(where, "?", "values must be strings or integers (or a list of them)");
    }
    std::vector<std::string> expanded;
    try {
      expanded = ExpandRange(text);
    } catch (const std::exception& e) {
      c.Fail(where, text, e.what());
    }
    out.insert(out.end(), expanded.begin(), expanded.end());
  }
  return out;
}

std::string Canonical(const std::string& key, const std::string& v) {
  if (key == "n" || key == "head_dim")
    if (auto n = cli::ParseCountText(v)) return std::to_string(*n);
  return v;
}

// The first line toml++ should not see, and why: toml++ 3.3.0 reaches __builtin_unreachable
// (undefined behaviour in every build) when it tests some non-ASCII characters for whitespace,
// e.g. U+00A1..U+0499 after a key (found by tests/fuzz/fuzz_sweep_config under UBSan). No config
// value is non-ASCII, so non-ASCII is refused outside comments; and TOML 1.0 forbids control
// characters other than tab anywhere (CR only before LF), refused here with the byte named.
// Quotes are followed within a line so that a '#' inside a string does not start a comment.
struct BadLine {
  std::size_t line = 0;
  std::string what;
};

BadLine FirstLineTomlppMustNotSee(const std::string& text) {
  std::size_t line = 1;
  char quote = 0;
  bool comment = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '\n') {
      ++line;
      quote = 0;
      comment = false;
    } else if ((u < 0x20 && ch != '\t' &&
                !(ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) ||
               u == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", u);
      return {line, std::string("a control character (") + hex + ")"};
    } else if (u > 0x7F) {
      if (!comment) return {line, "a non-ASCII character outside a comment"};
    } else if (comment) {
    } else if (quote) {
      if (ch == '\\' && quote == '"' && i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
      else if (ch == quote)
        quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '#') {
      comment = true;
    }
  }
  return {};
}

}  // namespace

Config ParseConfig(const std::string& text, const std::string& path) {
  Config cfg;
  cfg.path = path;
  cfg.text = text;
  const Checker c{path};
  if (const BadLine bad = FirstLineTomlppMustNotSee(text); bad.line != 0)
    throw ConfigError("carrier sweep: " + path + ":" + std::to_string(bad.line) + ": " + bad.what +
                      " (sweep configs are ASCII TOML)");
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw ConfigError("carrier sweep: " + path + ":" + std::to_string(e.source().begin.line) +
                      ": not valid TOML: " + std::string(e.description()));
  }
  for (auto&& [k, v] : root) {
    const std::string key(k.str());
    if (key != "sweep" && key != "grid" && key != "exclude")
      c.Fail("section [" + key + "]", key, "unknown section; allowed: [sweep] [grid] [[exclude]]");
    if ((key == "sweep" || key == "grid") && !v.is_table())
      c.Fail(key, "?", "must be a table ([" + key + "])");
    if (key == "exclude" && !v.is_array_of_tables())
      c.Fail(key, "?", "must be an array of tables ([[exclude]])");
  }
  // [sweep]
  std::string stem = path;
  if (auto slash = stem.find_last_of('/'); slash != std::string::npos)
    stem = stem.substr(slash + 1);
  if (auto dot = stem.rfind(".toml"); dot != std::string::npos) stem = stem.substr(0, dot);
  cfg.name = stem;
  cfg.seed = 1;
  if (const auto* sweep = root["sweep"].as_table()) {
    for (auto&& [k, v] : *sweep) {
      const std::string key(k.str());
      const std::string where = "[sweep] " + key;
      if (key == "name") {
        auto s = v.value_exact<std::string>();
        if (!s || s->empty() || s->find_first_of("/ ,\"\\") != std::string::npos)
          c.Fail(where, s ? *s : "?", "a non-empty string without '/', spaces, commas or quotes");
        cfg.name = *s;
      } else if (key == "seed" || key == "trials") {
        auto i = v.value_exact<std::int64_t>();
        if (!i || *i < (key == "trials" ? 1 : 0) || (key == "trials" && *i > 1000000))
          c.Fail(where, i ? std::to_string(*i) : "?",
                 key == "trials" ? "an integer from 1 to 10^6" : "a non-negative integer");
        (key == "seed" ? cfg.seed : cfg.trials) = static_cast<std::uint64_t>(*i);
      } else {
        c.Fail(where, key, "unknown key; allowed in [sweep]: name seed trials");
      }
    }
  }
  // [grid]
  const auto* grid = root["grid"].as_table();
  if (!grid) c.Fail("[grid]", "", "missing; it needs at least op, dtype, n and input");
  for (auto&& [k, v] : *grid) {
    const std::string key(k.str());
    const auto& keys = GridKeys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      c.Fail("[grid] " + key, key, "unknown key; allowed: " + Join(keys));
    std::vector<std::string> vals = Values(c, "[grid] " + key, v);
    std::set<std::string> seen;
    for (auto& s : vals) {
      CheckValue(c, key, s);
      s = Canonical(key, s);
      if (!seen.insert(s).second) c.Fail("[grid] " + key, s, "listed twice");
    }
    cfg.grid[key] = vals;
  }
  if (cfg.grid.count("op") && !cfg.grid.count("mn"))
    for (const auto& op : cfg.grid.at("op"))
      if (TakesMn(op))
        c.Fail("[grid] mn", "", "missing; op matmul needs mn = [\"MxN\", ...] (n is K)");
  for (const char* required : {"op", "dtype", "n", "input"})
    if (!cfg.grid.count(required) &&
        !(std::string(required) == "dtype" && cfg.grid.count("precision")))
      c.Fail(std::string("[grid] ") + required, "",
             "missing; a sweep needs op, dtype (or precision), n and input");
  // precision stands for dtype, acc and round (PrecisionShorthand): those keys may be given
  // beside it only with the values every precision value implies.
  if (cfg.grid.count("precision") && cfg.grid.count("op")) {
    for (const auto& op : cfg.grid.at("op"))
      for (const auto& pv : cfg.grid.at("precision")) {
        ShorthandSpec sh;
        try {
          sh = PrecisionShorthand(pv, op);
        } catch (const std::invalid_argument& e) {
          c.Fail("[grid] precision", pv, e.what());
        }
        for (const char* key : {"dtype", "acc", "round"}) {
          if (!cfg.grid.count(key)) continue;
          for (const auto& v : cfg.grid.at(key)) {
            const std::string want = std::string(key) == "dtype" ? sh.dtype
                                     : std::string(key) == "acc" ? sh.acc
                                                                 : sh.round;
            std::string got = v;
            if (std::string(key) == "acc" && (v == "same")) got = sh.dtype;
            if (got == want) continue;
            throw ConfigError("carrier sweep: " + path + ": [grid] precision = '" + pv +
                              "' and [grid] " + key + " = '" + v +
                              "' disagree (that precision is " + key + " " + want +
                              "); give one or the other");
          }
        }
      }
  }
  for (const auto& [k, d] : GridDefaults())
    if (!cfg.grid.count(k)) cfg.grid[k] = d;
  // [[exclude]]
  if (const auto* ex = root["exclude"].as_array()) {
    for (std::size_t i = 0; i < ex->size(); ++i) {
      const auto* t = (*ex)[i].as_table();
      Exclusion e;
      for (auto&& [k, v] : *t) {
        const std::string key(k.str());
        const std::string where = "[[exclude]] #" + std::to_string(i + 1) + " " + key;
        const auto& keys = GridKeys();
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
          c.Fail(where, key, "unknown key; allowed: " + Join(keys));
        for (auto& s : Values(c, where, v)) {
          CheckValue(c, key, s);
          e.match[key].push_back(Canonical(key, s));
        }
      }
      if (e.match.empty())
        c.Fail("[[exclude]] #" + std::to_string(i + 1), "", "empty: it would drop every trial");
      cfg.exclude.push_back(std::move(e));
    }
  }
  if (Enumerate(cfg).empty())
    c.Fail("[grid]", "", "the cross product (after [[exclude]]) is empty");
  return cfg;
}

std::vector<TrialParams> Enumerate(const Config& c) {
  std::vector<TrialParams> out;
  const auto& g = c.grid;
  auto excluded = [&](const std::map<std::string, std::string>& cell) {
    for (const auto& e : c.exclude) {
      bool all = true;
      for (const auto& [k, vals] : e.match) {
        const auto it = cell.find(k);
        if (it == cell.end() || std::find(vals.begin(), vals.end(), it->second) == vals.end()) {
          all = false;
          break;
        }
      }
      if (all) return true;
    }
    return false;
  };
  std::uint64_t id = 0;
  std::map<std::string, std::string> cell;
  const std::vector<std::string> none = {""};
  // The (dtype, acc, round) triples of one precision value: the grid's cross product when the
  // value is empty (no precision key), else the one triple the policy stands for.
  struct Arith {
    std::string dtype, acc, round;
  };
  auto ariths = [&](const std::string& op, const std::string& precision) {
    std::vector<Arith> v;
    if (!precision.empty()) {
      const ShorthandSpec sh = PrecisionShorthand(precision, op);
      v.push_back({sh.dtype, sh.acc, sh.round});
      return v;
    }
    for (const auto& dtype : g.at("dtype"))
      for (const auto& acc : g.at("acc"))
        for (const auto& round : g.at("round")) v.push_back({dtype, acc, round});
    return v;
  };
  for (const auto& op : g.at("op"))
    for (const auto& precision : g.at("precision"))
      for (const auto& [dtype, acc, round] : ariths(op, precision))
        for (const auto& exp : g.at("exp"))
          for (const auto& schedule : g.at("schedule"))
            for (const auto& backend : g.at("backend"))
              for (const auto& n : g.at("n"))
                for (const auto& input : g.at("input"))
                  for (const auto& hd : TakesHeadDim(op) ? g.at("head_dim") : none)
                    for (const auto& mn : TakesMn(op) ? g.at("mn") : none) {
                      cell = {{"op", op},           {"dtype", dtype}, {"acc", acc},
                              {"round", round},     {"exp", exp},     {"schedule", schedule},
                              {"backend", backend}, {"n", n},         {"input", input}};
                      if (!hd.empty()) cell["head_dim"] = hd;
                      if (!mn.empty()) cell["mn"] = mn;
                      if (!precision.empty()) cell["precision"] = precision;
                      if (excluded(cell)) continue;
                      for (std::uint64_t t = 0; t < c.trials; ++t) {
                        TrialParams p;
                        p.trial_id = id++;
                        p.op = op;
                        p.precision = precision;
                        p.dtype = dtype;
                        p.acc = acc;
                        p.round = round;
                        p.exp = exp;
                        p.schedule = schedule;
                        p.backend = backend;
                        p.n = std::stoull(n);
                        p.input = input;
                        p.head_dim = hd.empty() ? 0 : std::stoull(hd);
                        p.trial = t;
                        if (!mn.empty()) {
                          p.mn = mn;
                          p.mat_m = std::stoull(mn.substr(0, mn.find('x')));
                          p.mat_n = std::stoull(mn.substr(mn.find('x') + 1));
                        }
                        // matmul: A and B drawn from input_seed and input_seed + 1, per mn
                        p.input_seed = InputSeed(c.seed, mn.empty() ? input : input + "|" + mn, p.n,
                                                 p.head_dim, t);
                        // Stochastic rounding: one stream per trial, from its input and cell.
                        p.sr_seed = SplitMix64(p.input_seed ^
                                               Fnv1a(op + "|" + dtype + "|" + acc + "|" + round +
                                                     "|" + exp + "|" + schedule + "|" + backend)) >>
                                    1;
                        out.push_back(std::move(p));
                      }
                    }
  return out;
}

#else  // no toml++ or no MPFR: ParseConfig is never reached (sweep refuses first)

Config ParseConfig(const std::string&, const std::string& path) {
  throw ConfigError("carrier sweep: " + path + ": this build cannot parse sweep configs");
}
std::vector<TrialParams> Enumerate(const Config&) { return {}; }

#endif

}  // namespace carrier::sweep

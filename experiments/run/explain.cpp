// experiments/run/explain.cpp: Explain (explain.hpp): the search, its invariants and its report.
#include "run/explain.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cli/args.hpp"
#include "cli/number_format.hpp"
#include "core/mma.hpp"
#include "core/orders/shape.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"
#include "io/json.hpp"
#include "io/tree_file.hpp"
#include "precision/bounds.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/metrics.hpp"
#include "precision/rounding.hpp"
#include "registry/registry.hpp"
#include "run/tree_shape.hpp"

namespace carrier::run {

namespace {

using Clock = std::chrono::steady_clock;

// One precision of the search: the compute format and rounding, and an optional output format
// the result is rounded to once (rne).
struct Precision {
  std::string acc, round, out;  // out empty: none
  Format acc_f;
  Rounding rounding = Rounding::kNearestEven;
  std::optional<Format> out_f;
  registry::ScalarKind kind = registry::ScalarKind::kDouble;
  std::string Label() const { return acc + " " + round + (out.empty() ? "" : " > " + out); }
  const Format& Final() const { return out_f ? *out_f : acc_f; }
};

std::vector<std::string> SplitText(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

Precision MakePrecision(const std::string& acc, const std::string& round, const std::string& out) {
  Precision p;
  p.acc = acc;
  p.round = round;
  p.out = out;
  try {
    p.acc_f = ParseFormat(acc);
    p.rounding = ParseRounding(round);
    if (!out.empty()) p.out_f = ParseFormat(out);
  } catch (const std::exception& e) {
    throw SpecError(std::string("search: ") + e.what());
  }
  if (p.rounding == Rounding::kStochastic)
    throw SpecError("search: round sr draws random bits; explain searches deterministic roundings");
  const bool nearest = p.rounding == Rounding::kNearestEven;
  if (p.acc_f == Fp32() && nearest) {
    p.kind = registry::ScalarKind::kFloat;
  } else if (p.acc_f == Fp64()) {
    if (!nearest) throw SpecError("search: fp64 computes in rne only, not " + round);
    p.kind = registry::ScalarKind::kDouble;
  } else {
    if (!IsEmulableFormat(p.acc_f))
      throw SpecError("search: acc '" + acc + "' cannot be emulated (needs p <= 26)");
    p.kind = registry::ScalarKind::kEmulated;
  }
  if (p.out_f && p.out_f->precision >= p.acc_f.precision)
    throw SpecError("search: out " + out + " is not narrower than acc " + acc);
  return p;
}

// Whether format f holds value v (NaN and infinities where f has them).
bool Holds(const Format& f, double v) {
  if (std::isnan(v)) return f.has_nan;
  if (std::isinf(v)) return f.has_inf;
  return RoundToFormat(v, f, Rounding::kNearestEven) == v;
}

std::uint64_t Bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
bool SameBits(double x, double y) { return (std::isnan(x) && std::isnan(y)) || Bits(x) == Bits(y); }

double Gamma(double k, double u) { return k * u < 1 ? k * u / (1 - k * u) : INFINITY; }

struct Space {
  std::vector<std::string> orders;  // canonical texts, each parsed fine
  std::vector<Precision> plain, mma;
};

// One replayed tree: per precision of its list, whether it was replayed, and the result.
struct TreeRecord {
  std::string hash;
  bool mma = false;
  std::vector<char> replayed;  // per precision of its list: 1 replayed, 0 pruned
  std::vector<double> value;
};

struct OrderRecord {
  TreeRecord* tree = nullptr;
  bool failed = false;  // the order does not build for this n (skipped)
};

// The difference between two configurations: (size, text); size 0 means the same tree and
// precision.
std::pair<int, std::string> Difference(const ExplainConfig& x, const ExplainConfig& y) {
  int pd = (x.acc != y.acc) + (x.round != y.round) + (x.out != y.out);
  int od = 0;
  const std::vector<std::string> fx = SplitText(x.schedule, ':'), fy = SplitText(y.schedule, ':');
  if (x.tree_hash != y.tree_hash) {
    if (fx[0] != fy[0]) {
      od = 3;
    } else if (fx[0] == "mma" && fx[1] == fy[1]) {
      od = 1;  // the same profile, another promotion interval
    } else if (fx.size() == fy.size()) {
      int differ = 0;
      for (std::size_t i = 0; i < fx.size(); ++i) differ += fx[i] != fy[i];
      od = differ == 1 ? 1 : 2;
    } else {
      od = 2;
    }
  }
  std::string text;
  auto promote = [](const std::vector<std::string>& f) {
    return f.size() >= 4 ? f[3] : std::string("none");
  };
  if (od == 0) {
    text = "same tree (" + x.tree_hash + "), " + x.precision + " vs " + y.precision;
  } else if (pd == 0) {
    if (fx[0] == "mma" && fy[0] == "mma" && fx[1] == fy[1]) {
      text = "same profile " + fx[1] + " in " + x.precision + ", promotion interval " +
             promote(fx) + " vs " + promote(fy);
    } else {
      text = "same precision (" + x.precision + "), " + x.schedule + " vs " + y.schedule;
    }
  } else {
    text = x.schedule + " in " + x.precision + " vs " + y.schedule + " in " + y.precision;
  }
  return {od + pd, text};
}

}  // namespace

std::vector<std::string> LibraryOrders(std::uint64_t n) {
  std::vector<std::string> o = {"seq", "reverse", "pairwise"};
  auto add = [&](const std::string& s) { o.push_back(s); };
  auto num = [](std::uint64_t v) { return std::to_string(v); };
  for (std::uint64_t l = 2; l <= 1024 && l < n; l *= 2) add("pairwise:" + num(l));
  for (std::uint64_t b = 2; b < n; b *= 2) {
    add("blocked:" + num(b));
    add("blocked:" + num(b) + ":pairwise");
  }
  for (std::uint64_t s = 2; s < n; s *= 2) add("strided:" + num(s));
  for (std::uint64_t c = 2; c <= 256 && c <= n; c *= 2) {
    add("omp:" + num(c));
    add("omp:" + num(c) + ":pairwise");
    add("omp:" + num(c) + ":seq:pairwise");
    add("omp:" + num(c) + ":seq:strided:8");
  }
  for (std::uint64_t s = 2; s <= 256 && s <= n; s *= 2) {
    add("splitk:" + num(s));
    add("splitk:" + num(s) + ":pairwise");
  }
  for (std::uint64_t t : {128, 256, 512, 1024})
    for (std::uint64_t items : {1, 2, 4, 8})
      for (const char* arrange : {"blocked", "striped"})
        for (const char* warp : {"shfl", "xor"})
          add("cuda:" + num(t) + ":" + num(items) + ":" + arrange + ":" + warp);
  for (std::uint64_t l = 1; l <= 64; l *= 2) {
    add("canonical:" + num(l));
    add("canonical:" + num(l) + ":bisect");
  }
  add("numpy");
  add("numpy:128:8:0");
  for (std::uint64_t lanes : {4, 8, 16}) add("torch:" + num(lanes));
  for (std::string& s : o) s = ToString(ParseSchedule(s));  // canonical texts, as reported
  return o;
}

namespace {

std::vector<std::string> MmaOrders(std::uint64_t n, const std::vector<double>& a,
                                   const std::vector<double>& b,
                                   const std::vector<std::string>& profiles,
                                   const std::vector<std::string>& promotes) {
  std::vector<std::string> out;
  for (const MmaProfile& p : kMmaProfiles) {
    const bool named = !profiles.empty() && std::find(profiles.begin(), profiles.end(),
                                                      std::string(p.name)) != profiles.end();
    if (!profiles.empty() && !named) continue;
    // A block-scaled profile takes block-scaled storage only (run/scaled_dot.hpp); explain's
    // inputs are plain values, so the default search leaves it out and naming it is refused.
    if (p.scale != MmaScale::kNone) {
      if (named)
        throw SpecError("search: mma profile " + std::string(p.name) +
                        " takes block-scaled inputs (its own format's codes and scales); "
                        "explain searches plain inputs");
      continue;
    }
    const mma_detail::InputFormat f = mma_detail::FormatOf(p.node.input);
    bool fits = true;
    for (std::size_t i = 0; i < a.size() && fits; ++i)
      fits = std::isfinite(a[i]) && std::isfinite(b[i]) && mma_detail::Fits(f, a[i]) &&
             mma_detail::Fits(f, b[i]);
    if (!fits) continue;
    const std::string base = "mma:" + std::string(p.name);
    if (promotes.empty()) {  // every power-of-two multiple of k below n, and none
      out.push_back(base);
      for (std::uint64_t m = p.k; m < n; m *= 2)
        out.push_back(base + ":promote:" + std::to_string(m));
    } else {
      for (const std::string& m : promotes) {
        if (m == "none") {
          out.push_back(base);
          continue;
        }
        const auto v = cli::ParseCountText(m);
        if (!v || *v == 0) throw SpecError("search: promote '" + m + "' is not a count or none");
        if (*v % p.k == 0) out.push_back(base + ":promote:" + m);
      }
    }
  }
  return out;
}

Space ParseSpace(const ExplainSpec& spec, bool dot, std::uint64_t n, const std::vector<double>& a,
                 const std::vector<double>& b) {
  std::map<std::string, std::vector<std::string>> items;
  if (!spec.search.empty()) {
    for (const std::string& item : SplitText(spec.search, ';')) {
      if (item.empty()) continue;
      const auto eq = item.find('=');
      const std::string key = item.substr(0, eq);
      static const std::set<std::string> kKeys = {"orders", "acc", "round",
                                                  "out",    "mma", "promote"};
      if (eq == std::string::npos || !kKeys.count(key))
        throw SpecError("search: '" + item +
                        "' is not KEY=LIST with KEY one of orders acc round out mma promote");
      if (items.count(key)) throw SpecError("search: " + key + " given twice");
      std::vector<std::string> list = SplitText(item.substr(eq + 1), ',');
      for (const auto& v : list)
        if (v.empty()) throw SpecError("search: an empty value in '" + item + "'");
      items[key] = list;
    }
  }
  auto get = [&](const std::string& key, std::vector<std::string> fallback) {
    return items.count(key) ? items[key] : fallback;
  };
  Space sp;
  std::set<std::string> seen;
  auto add_order = [&](const std::string& text) {
    std::string canonical;
    try {
      canonical = ToString(ParseSchedule(text));
    } catch (const ScheduleError& e) {
      throw SpecError(std::string("search: ") + e.what());
    }
    if (canonical.rfind("mma:", 0) == 0 && !dot)
      throw SpecError("search: " + canonical + " is a dot order (mma), not a sum order");
    if (seen.insert(canonical).second) sp.orders.push_back(canonical);
  };
  for (const std::string& o : get("orders", {"library"})) {
    if (o == "library") {
      for (const std::string& l : LibraryOrders(n)) add_order(l);
    } else {
      add_order(o);
    }
  }
  const std::vector<std::string> mma_list = get("mma", {"all"});
  const bool mma_none = mma_list.size() == 1 && mma_list[0] == "none";
  if (!dot && items.count("mma") && !mma_none)
    throw SpecError("search: mma profiles apply to op dot only");
  if (dot && !mma_none) {
    std::vector<std::string> profiles;
    if (!(mma_list.size() == 1 && mma_list[0] == "all")) {
      for (const auto& p : mma_list)
        if (!FindMmaProfile(p))
          throw SpecError("search: unknown mma profile '" + p +
                          "'; profiles: " + MmaProfileNames());
      profiles = mma_list;
    }
    std::vector<std::string> promotes = get("promote", {});
    if (promotes.size() == 1 && promotes[0] == "all") promotes.clear();
    for (const std::string& m : MmaOrders(n, a, b, profiles, promotes)) add_order(m);
  }
  const std::vector<std::string> accs =
      get("acc", {"fp8e4m3", "fp8e5m2", "fp16", "bf16", "tf32", "fp32", "fp64"});
  const std::vector<std::string> rounds = get("round", {"rne", "rna", "rz", "ru", "rd", "ro"});
  std::vector<std::string> outs = get("out", {"fp32", "bf16", "fp16"});
  if (outs.size() == 1 && outs[0] == "none") outs.clear();
  for (const std::string& acc : accs) {
    for (const std::string& r : rounds) {
      // fp64 computes in rne only: other modes are skipped unless acc=fp64 was asked for.
      if (acc == "fp64" && r != "rne" && !items.count("acc")) continue;
      sp.plain.push_back(MakePrecision(acc, r, ""));
    }
  }
  for (const std::string& acc : accs) {
    const Format fa = ParseFormat(acc);
    if (!(fa == Fp32() || fa == Fp64())) continue;  // wide accumulators: fp32, fp64
    for (const std::string& o : outs) {
      Format fo;
      try {
        fo = ParseFormat(o);
      } catch (const std::exception& e) {
        throw SpecError(std::string("search: out: ") + e.what());
      }
      if (fo.precision < fa.precision) sp.plain.push_back(MakePrecision(acc, "rne", o));
    }
  }
  for (const std::string& acc : accs)
    if (acc == "fp32" || acc == "fp64") sp.mma.push_back(MakePrecision(acc, "rne", ""));
  if (sp.orders.empty()) throw SpecError("search: no orders to try");
  return sp;
}

// The narrowest predefined format (no saturating one) holding every value.
std::string InferDtype(const std::vector<double>& a, const std::vector<double>& b) {
  for (const char* name : {"fp8e4m3", "fp8e5m2", "fp16", "bf16", "tf32", "fp32"}) {
    const Format f = ParseFormat(name);
    bool all = true;
    for (double v : a) all = all && Holds(f, v);
    for (double v : b) all = all && Holds(f, v);
    if (all) return name;
  }
  return "fp64";
}

}  // namespace

ExplainResult Explain(const ExplainSpec& spec, ExplainProgress* progress) {
  const auto t0 = Clock::now();
  if (spec.op != "sum" && spec.op != "dot")
    throw SpecError("explain searches op sum or dot, not '" + spec.op + "'");
  const bool dot = spec.op == "dot";
  if (spec.observed.empty()) throw SpecError("give at least one observed output");
  ExplainResult r;
  r.op = spec.op;
  // The input, rounded to its storage format, and its certified reference.
  TrialSpec ts;
  ts.op = spec.op;
  const bool generated = !spec.gen.empty();
  ts.dtype = !spec.dtype.empty() ? spec.dtype : generated ? "fp32" : InferDtype(spec.a, spec.b);
  ts.acc = "fp64";
  ts.schedule = "seq";
  const ResolvedTrial base = ResolveTrial(ts);
  TrialInput input;
  if (generated) {
    if (spec.n == 0) throw SpecError("n must be at least 1");
    inputs::GeneratorSpec g;
    try {
      g = inputs::ParseGenerator(spec.gen);
      input = MakeInput(base, g, spec.n, spec.seed);
    } catch (const SpecError&) {
      throw;
    } catch (const std::exception& e) {
      throw SpecError(e.what());
    }
  } else {
    if (spec.a.empty()) throw SpecError("the input is empty");
    if (dot && spec.b.size() != spec.a.size())
      throw SpecError("dot takes two columns (a b) of equal length");
    input = MakeInputFromValues(base, spec.a, dot ? spec.b : std::vector<double>{},
                                spec.input_text.empty() ? "given" : spec.input_text);
  }
  if (input.storage_overflows > 0) throw SpecError(StorageOverflowText(input, ts.dtype));
  r.dtype = base.storage.name;
  r.input = input.text;
  r.n = input.n;
  const std::uint64_t n = input.n;
  std::vector<double> scratch_a, scratch_b;
  const std::span<const double> sa = ColumnValues(input, scratch_a);
  const std::span<const double> sb = ColumnBValues(input, scratch_b);
  const std::vector<double> a(sa.begin(), sa.end());
  const std::vector<double> b(sb.begin(), sb.end());
  const auto tr = Clock::now();
  const SharedReference shared = ComputeReference(base, input);
  r.reference_seconds = std::chrono::duration<double>(Clock::now() - tr).count();
  const registry::Entry& e = *base.op;
  const long double exact = shared.ref.as_long_double.at(e.main);
  r.reference = shared.ref.as_double.at(e.main);
  r.reference_tier = shared.tier;
  r.reference_certified = shared.ref.cert.certified;

  const Space sp = ParseSpace(spec, dot, n, a, b);
  r.orders = sp.orders.size();
  r.precisions = sp.plain.size();

  // Cheap invariants that depend on the precision alone: the value set and the direction.
  double sum_abs = 0;
  bool all_nonneg = true, all_nonpos = true;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double t = dot ? a[i] * b[i] : a[i];
    sum_abs += std::fabs(t);
    all_nonneg = all_nonneg && !(t < 0);
    all_nonpos = all_nonpos && !(t > 0);
  }
  sum_abs *= 1 + std::ldexp(1.0, -40);  // the double sum of |t| rounded up, generously
  const std::size_t nobs = spec.observed.size();
  const bool exact_known = r.reference_certified && std::isfinite(static_cast<double>(exact));
  enum Verdict : char { kOpen = 0, kValueSet = 1, kDirection = 2 };
  auto verdicts = [&](const std::vector<Precision>& list) {
    std::vector<std::vector<char>> v(list.size(), std::vector<char>(nobs, kOpen));
    for (std::size_t p = 0; p < list.size(); ++p) {
      const Precision& pr = list[p];
      for (std::size_t k = 0; k < nobs; ++k) {
        const double obs = spec.observed[k];
        if (!Holds(pr.Final(), obs)) {
          v[p][k] = kValueSet;
          continue;
        }
        // dot: the factors' own conversion to acc must be exact, or rounding one factor down
        // can raise a product with a negative cofactor.
        if (!exact_known || !std::isfinite(obs) || pr.out_f ||
            (dot && !ValuesWithin(base.storage, pr.acc_f)))
          continue;
        Rounding dir = pr.rounding;
        if (dir == Rounding::kTowardZero)
          dir = all_nonneg ? Rounding::kDown : all_nonpos ? Rounding::kUp : dir;
        const long double o = obs;
        if ((dir == Rounding::kDown && o > exact) || (dir == Rounding::kUp && o < exact))
          v[p][k] = kDirection;
      }
    }
    return v;
  };
  const auto plain_verdict = verdicts(sp.plain), mma_verdict = verdicts(sp.mma);

  // The search: each worker takes the next order, finds its tree's hash, and replays that tree
  // in every open precision when it is the first order with that hash.
  std::vector<OrderRecord> order_rec(sp.orders.size());
  std::vector<std::unique_ptr<TreeRecord>> trees;
  std::map<std::string, TreeRecord*> by_hash;
  std::mutex mutex;
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> replays{0}, pruned_bound{0};
  if (progress) progress->orders_total = sp.orders.size();
  const registry::ReplayInput ri{a, b, n, 0, input.id};
  std::exception_ptr failure;
  auto worker = [&] {
    registry::ConvertedInputScope keep;  // one conversion per input type and thread
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= sp.orders.size()) break;
      try {
        Schedule s = ParseSchedule(sp.orders[i]);
        const bool is_mma = s.kind() == ScheduleKind::kMma;
        TreeShape shape;
        MergeTree tree;
        bool walked = false;
        try {
          s = io::LoadTrees(std::move(s));  // a file: order that cannot be read fails as one
          walked = ShapeOfSchedule(s, n, shape);
          if (!walked) {
            tree = BuildTree(s, n);
            shape = ShapeOfTree(tree);
          }
        } catch (const ScheduleError&) {
          order_rec[i].failed = true;  // e.g. a cuda preset this n cannot launch
          if (progress) ++progress->orders_done;
          continue;
        }
        TreeRecord* rec = nullptr;
        bool owner = false;
        {
          std::lock_guard<std::mutex> lock(mutex);
          auto it = by_hash.find(shape.hash);
          if (it == by_hash.end()) {
            trees.push_back(std::make_unique<TreeRecord>());
            rec = trees.back().get();
            rec->hash = shape.hash;
            rec->mma = is_mma;
            by_hash.emplace(shape.hash, rec);
            owner = true;
          } else {
            rec = it->second;
          }
        }
        order_rec[i].tree = rec;
        if (owner) {
          const std::vector<Precision>& list = is_mma ? sp.mma : sp.plain;
          const auto& verdict = is_mma ? mma_verdict : plain_verdict;
          std::vector<char> done(list.size(), 0);
          std::vector<double> value(list.size(), NAN);
          // Leaf depth plus the roundings before the first addition: the input's conversion to
          // acc (and for dot the factors' and the product's).
          const double depth = static_cast<double>(shape.stats.max_leaf_depth) + (dot ? 3 : 1);
          for (std::size_t p = 0; p < list.size(); ++p) {
            const Precision& pr = list[p];
            bool open = false;
            for (std::size_t k = 0; k < nobs; ++k) open = open || verdict[p][k] == kOpen;
            if (!open) continue;
            // The a-priori bound of this tree in this precision (plain orders only).
            if (!is_mma && exact_known) {
              const double u = UnitRoundoff(pr.acc_f, pr.rounding);
              const double g = Gamma(depth, u);
              double bound = g * sum_abs;
              // Underflow of a conversion or a product: at most one subnormal quantum each.
              bound += 3.0 * static_cast<double>(n) * pr.acc_f.MinSubnormal();
              if (pr.out_f)
                bound +=
                    pr.out_f->UnitRoundoff() * (std::fabs(static_cast<double>(exact)) + bound) +
                    pr.out_f->MinSubnormal();
              const bool safe = std::isfinite(bound) && sum_abs * (1 + g) < pr.acc_f.MaxFinite() &&
                                !pr.acc_f.saturate;
              if (safe) {
                bool possible = false;
                for (std::size_t k = 0; k < nobs && !possible; ++k) {
                  if (verdict[p][k] != kOpen) continue;
                  const double obs = spec.observed[k];
                  const long double err = std::fabs(static_cast<long double>(obs) - exact);
                  possible = !std::isfinite(obs) ||
                             err <= static_cast<long double>(bound) * (1 + 1e-9L) + 1e-300L;
                }
                if (!possible) {
                  ++pruned_bound;
                  continue;
                }
              }
            }
            registry::Replayed got;
            const registry::ExpKind exp = registry::ExpKind::kLibm;
            const MergeTree* t = walked ? nullptr : &tree;
            if (pr.kind == registry::ScalarKind::kEmulated) {
              EmulationScope scope(pr.acc_f, pr.rounding, 1);
              got = e.replay(pr.kind, exp, s, t, ri);
            } else {
              got = e.replay(pr.kind, exp, s, t, ri);
            }
            double v = static_cast<double>(got.components.at(e.main));
            if (pr.out_f) v = RoundToFormat(v, *pr.out_f, Rounding::kNearestEven);
            value[p] = v;
            done[p] = 1;
            ++replays;
            if (progress) ++progress->replays;
          }
          std::lock_guard<std::mutex> lock(mutex);
          rec->replayed = std::move(done);
          rec->value = std::move(value);
        }
        if (progress) ++progress->orders_done;
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::current_exception();
        next = sp.orders.size();
      }
    }
  };
  unsigned threads =
      spec.threads ? spec.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, sp.orders.size()));
  r.threads = threads;
  {
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& th : pool) th.join();
  }
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const SpecError&) {
      throw;
    } catch (const std::exception& ex) {
      throw SpecError(ex.what());
    }
  }
  r.trees = trees.size();
  r.replays = replays;
  r.pruned_bound = pruned_bound;

  // Every (order, precision) is a candidate; classify each once and collect the matches.
  r.observed.resize(nobs);
  std::set<const TreeRecord*> counted;
  for (std::size_t i = 0; i < sp.orders.size(); ++i) {
    const OrderRecord& o = order_rec[i];
    if (o.failed || !o.tree) continue;
    const TreeRecord& t = *o.tree;
    const std::vector<Precision>& list = t.mma ? sp.mma : sp.plain;
    const auto& verdict = t.mma ? mma_verdict : plain_verdict;
    const bool first = counted.insert(&t).second;
    for (std::size_t p = 0; p < list.size(); ++p) {
      ++r.candidates;
      bool value_set = true, direction = true;
      for (std::size_t k = 0; k < nobs; ++k) {
        value_set = value_set && verdict[p][k] == kValueSet;
        direction = direction && verdict[p][k] != kOpen;
      }
      if (value_set) {
        ++r.pruned_value_set;
        continue;
      }
      if (direction) {
        ++r.pruned_direction;
        continue;
      }
      if (!first) ++r.shared_tree;
      if (!t.replayed[p]) continue;
      for (std::size_t k = 0; k < nobs; ++k) {
        if (verdict[p][k] != kOpen || !SameBits(t.value[p], spec.observed[k])) continue;
        ExplainConfig c;
        c.schedule = sp.orders[i];
        c.precision = list[p].Label();
        c.acc = list[p].acc;
        c.round = list[p].round;
        c.out = list[p].out;
        c.tree_hash = t.hash;
        r.observed[k].matches.push_back(std::move(c));
      }
    }
  }
  // Groups by (tree hash, precision), the error of each observation, and the difference.
  for (std::size_t k = 0; k < nobs; ++k) {
    ExplainObservation& ob = r.observed[k];
    ob.value = spec.observed[k];
    std::map<std::pair<std::string, std::string>, std::size_t> at;
    for (const ExplainConfig& c : ob.matches) {
      const auto key = std::make_pair(c.tree_hash, c.precision);
      auto it = at.find(key);
      if (it == at.end()) {
        it = at.emplace(key, ob.groups.size()).first;
        ob.groups.push_back({c.tree_hash, c.precision, {}});
      }
      ob.groups[it->second].schedules.push_back(c.schedule);
    }
    Format f = base.storage;
    if (!ob.matches.empty()) {
      const ExplainConfig& c = ob.matches.front();
      f = ParseFormat(c.out.empty() ? c.acc : c.out);
    }
    ob.ulp_format = f.name;
    const ScalarError se = MeasureScalar(ob.value, exact, f);
    ob.abs_error = se.abs;
    ob.rel_error = se.rel;
    ob.ulp_error = se.ulps;
  }
  if (nobs >= 2) {
    const auto& m0 = r.observed[0].matches;
    const auto& m1 = r.observed[1].matches;
    if (SameBits(spec.observed[0], spec.observed[1])) {
      r.difference = "the same bits: no difference to explain";
    } else if (m0.empty() || m1.empty()) {
      r.difference = std::string("none: no configuration matches the ") +
                     (m0.empty() ? "first" : "second") + " observation";
    } else {
      int best = 1 << 30;
      const std::size_t cap = 4000;  // pairs examined: the first cap x cap matches
      for (std::size_t i = 0; i < m0.size() && i < cap; ++i)
        for (std::size_t j = 0; j < m1.size() && j < cap; ++j) {
          auto [size, text] = Difference(m0[i], m1[j]);
          if (size < best) {
            best = size;
            r.difference = text;
          }
        }
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

std::string ExplainJson(const ExplainResult& r) {
  auto num = [](double v) { return io::JsonNumberText(cli::Shortest(v)); };
  auto hex = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", v);
    return io::JsonQuote(buf);
  };
  io::JsonObject o;
  o.String("op", r.op).String("dtype", r.dtype).Raw("n", std::to_string(r.n));
  o.String("input", r.input);
  o.Raw("reference", num(r.reference)).String("reference_tier", r.reference_tier);
  o.Bool("reference_certified", r.reference_certified);
  o.Raw("orders", std::to_string(r.orders)).Raw("trees", std::to_string(r.trees));
  o.Raw("precisions", std::to_string(r.precisions));
  o.Raw("candidates", std::to_string(r.candidates));
  o.Raw("pruned_value_set", std::to_string(r.pruned_value_set));
  o.Raw("pruned_direction", std::to_string(r.pruned_direction));
  o.Raw("pruned_bound", std::to_string(r.pruned_bound));
  o.Raw("shared_tree", std::to_string(r.shared_tree));
  o.Raw("replays", std::to_string(r.replays));
  std::string obs = "[";
  for (std::size_t k = 0; k < r.observed.size(); ++k) {
    const ExplainObservation& ob = r.observed[k];
    io::JsonObject j;
    j.Raw("value", num(ob.value)).Raw("hex", hex(ob.value));
    j.Raw("abs_error", num(ob.abs_error)).Raw("rel_error", num(ob.rel_error));
    j.Raw("ulp_error", num(ob.ulp_error)).String("ulp_format", ob.ulp_format);
    j.Raw("matches", std::to_string(ob.matches.size()));
    std::string groups = "[";
    for (std::size_t g = 0; g < ob.groups.size(); ++g) {
      const ExplainGroup& gr = ob.groups[g];
      std::string scheds = "[";
      for (std::size_t s = 0; s < gr.schedules.size(); ++s)
        scheds += (s ? "," : "") + io::JsonQuote(gr.schedules[s]);
      scheds += "]";
      io::JsonObject gj;
      gj.String("tree_hash", gr.tree_hash)
          .String("precision", gr.precision)
          .Raw("schedules", scheds);
      groups += (g ? "," : "") + gj.Compact();
    }
    groups += "]";
    j.Raw("groups", groups);
    // Every matching configuration, with the index of its group (Python's DataFrame rows).
    std::map<std::pair<std::string, std::string>, std::size_t> group_of;
    for (std::size_t g = 0; g < ob.groups.size(); ++g)
      group_of[{ob.groups[g].tree_hash, ob.groups[g].precision}] = g;
    std::string configs = "[";
    for (std::size_t m = 0; m < ob.matches.size(); ++m) {
      const ExplainConfig& c = ob.matches[m];
      io::JsonObject cj;
      cj.String("schedule", c.schedule).String("acc", c.acc).String("round", c.round);
      cj.String("out", c.out).String("precision", c.precision).String("tree_hash", c.tree_hash);
      cj.Raw("group", std::to_string(group_of[{c.tree_hash, c.precision}]));
      configs += (m ? "," : "") + cj.Compact();
    }
    configs += "]";
    j.Raw("configs", configs);
    obs += (k ? "," : "") + j.Compact();
  }
  obs += "]";
  o.Raw("observed", obs);
  if (r.observed.size() >= 2) o.String("difference", r.difference);
  o.Raw("threads", std::to_string(r.threads));
  o.Raw("reference_seconds", num(r.reference_seconds)).Raw("seconds", num(r.seconds));
  return o.Compact();
}

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR

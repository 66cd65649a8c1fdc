#include "studies/lse_mnist.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <span>
#include <stdexcept>

#include "cli/args.hpp"
#include "inputs/read_numbers.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/rounding.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include "precision/reference/reference.hpp"
#endif

namespace carrier::studies {

namespace {

using E = EmulatedOracleDynamic;  // format and rne from the EmulationScope of the caller

[[noreturn]] void Bad(const std::string& path, std::size_t line, const std::string& what) {
  throw cli::UsageError("carrier study lse-mnist: " + path + ":" + std::to_string(line) + ": " +
                        what);
}

struct Computed {
  bool overflow = false;
  double lse = 0;         // lse algorithms
  std::vector<double> g;  // softmax algorithms
};

bool IsInf(E v) { return std::isinf(v.Value()); }

// In the current scope's format; x holds values of that format.
Computed LseBasic(const std::vector<E>& x) {
  Computed c;
  E s = E::FromFormatValue(0.0);
  for (E v : x) {
    const E e = exp(v);
    c.overflow |= IsInf(e);
    s = s + e;
  }
  c.overflow |= IsInf(s);
  c.lse = log(s).Value();
  return c;
}

std::size_t ArgMax(const std::vector<E>& x) {
  std::size_t k = 0;
  for (std::size_t i = 1; i < x.size(); ++i)
    if (x[i].Value() > x[k].Value()) k = i;
  return k;
}

Computed LseShifted(const std::vector<E>& x) {
  Computed c;
  const std::size_t k = ArgMax(x);
  const E a = x[k];
  E s = E::FromFormatValue(0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (i == k) continue;
    const E e = exp(x[i] - a);
    c.overflow |= IsInf(e);
    s = s + e;
  }
  c.overflow |= IsInf(s);
  // log1p rounded once from libm's double result (EmulatedOracle offers exp and log only).
  const E l = E(std::log1p(s.Value()));
  c.lse = (a + l).Value();
  return c;
}

Computed SoftmaxDivide(const std::vector<E>& x, bool shifted) {
  Computed c;
  const E a = shifted ? x[ArgMax(x)] : E::FromFormatValue(0.0);
  std::vector<E> e(x.size());
  E s = E::FromFormatValue(0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    e[i] = shifted ? exp(x[i] - a) : exp(x[i]);
    c.overflow |= IsInf(e[i]);
    s = s + e[i];
  }
  c.overflow |= IsInf(s);
  for (E v : e) c.g.push_back((v / s).Value());
  return c;
}

Computed SoftmaxNoDivide(const std::vector<E>& x, bool shifted) {
  Computed c = shifted ? LseShifted(x) : LseBasic(x);
  const E y = E::FromFormatValue(c.lse);
  for (E v : x) {
    const E g = exp(v - y);
    c.overflow |= IsInf(g);
    c.g.push_back(g.Value());
  }
  return c;
}

Computed RunAlgorithm(std::size_t algorithm, const std::vector<double>& stored) {
  std::vector<E> x;
  for (double v : stored) x.push_back(E::FromFormatValue(v));
  switch (algorithm) {
    case 0:
      return LseBasic(x);
    case 1:
      return LseShifted(x);
    case 2:
      return SoftmaxDivide(x, false);
    case 3:
      return SoftmaxDivide(x, true);
    case 4:
      return SoftmaxNoDivide(x, true);
    default:
      return SoftmaxNoDivide(x, false);
  }
}

// Relative error of lse (absolute when the exact value is 0), or the componentwise max
// relative error of softmax; inf/nan when the computed result is not finite.
double RelError(const Computed& got, double want_lse, const std::vector<double>& want_g,
                bool is_lse, double min_normal) {
  if (is_lse) {
    if (!std::isfinite(got.lse)) return std::numeric_limits<double>::infinity();
    const double d = std::fabs(got.lse - want_lse);
    return want_lse == 0 ? d : d / std::fabs(want_lse);
  }
  double worst = 0;
  for (std::size_t i = 0; i < want_g.size(); ++i) {
    if (!std::isfinite(got.g[i])) return std::numeric_limits<double>::infinity();
    if (std::fabs(want_g[i]) < min_normal) continue;  // underflow: outside the bounds' model
    worst = std::max(worst, std::fabs(got.g[i] - want_g[i]) / std::fabs(want_g[i]));
  }
  return worst;
}

// max_i |got_i - want_i| / max_i |want_i| (softmax), or the lse relative error.
double NormError(const Computed& got, double want_lse, const std::vector<double>& want_g,
                 bool is_lse) {
  if (is_lse) return RelError(got, want_lse, want_g, true, 0);
  double diff = 0, size = 0;
  for (std::size_t i = 0; i < want_g.size(); ++i) {
    if (!std::isfinite(got.g[i])) return std::numeric_limits<double>::infinity();
    diff = std::max(diff, std::fabs(got.g[i] - want_g[i]));
    size = std::max(size, std::fabs(want_g[i]));
  }
  return diff / size;
}

// The leading bound terms of the header, in units of u, from the exact (double) quantities.
double BoundU(std::size_t algorithm, const std::vector<double>& x) {
  const double n = static_cast<double>(x.size());
  const std::size_t k = static_cast<std::size_t>(std::max_element(x.begin(), x.end()) - x.begin());
  const double a = x[k];
  double s = 0, spread = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    spread = std::max(spread, std::fabs(x[i] - a));
    if (i != k) s += std::exp(x[i] - a);
  }
  const double log1p_s = std::log1p(s);
  const double y = a + log1p_s;
  const double shifted_abs = std::fabs(y) + log1p_s + s / (1 + s) * (n - 1 + spread);
  switch (algorithm) {
    case 0:
      return 1 + n / std::fabs(y);
    case 1:
      return shifted_abs / std::fabs(y);
    case 2:
      return n + 2;
    case 3:
      return n + 2 + 2 * spread;
    default: {
      double dev = 0;
      for (double v : x) dev = std::max(dev, std::fabs(v - y));
      // The exponent x_i - y^ carries lse's absolute error: lse-shifted's for case 4,
      // lse-basic's (|y| (1 + n/|y|) = |y| + n) for the unshifted variant.
      return 1 + dev + (algorithm == 4 ? shifted_abs : std::fabs(y) + n);
    }
  }
}

}  // namespace

const std::vector<std::string>& LseMnistAlgorithms() {
  static const std::vector<std::string> names = {
      "lse-basic",       "lse-shifted",           "softmax-basic",
      "softmax-shifted", "softmax-shifted-nodiv", "softmax-basic-nodiv"};
  return names;
}

std::vector<std::vector<double>> ReadVectorsCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw cli::UsageError("carrier study lse-mnist: cannot read '" + path + "'");
  std::vector<std::vector<double>> rows;
  std::string line;
  std::size_t line_no = 0, width = 0;
  bool header_seen = false;
  // A row is one vector (784 pixels for MNIST): 1 MiB per line is ample, and input without
  // newlines (/dev/zero) is refused at that length.
  for (;;) {
    try {
      if (!inputs::ReadTextLine(in, line, path, line_no + 1, std::size_t{1} << 20)) break;
    } catch (const inputs::InputError& e) {
      throw cli::UsageError(std::string("carrier study lse-mnist: ") + e.what());
    }
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = line.find(',', start);
      fields.push_back(
          line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (!header_seen) {
      header_seen = true;
      width = fields.size();
      continue;
    }
    if (fields.size() != width)
      Bad(path, line_no,
          std::to_string(fields.size()) + " fields, the header has " + std::to_string(width));
    std::vector<double> row;
    for (const std::string& f : fields) {
      double v = 0;
      const auto [ptr, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
      if (f.empty() || ec != std::errc() || ptr != f.data() + f.size())
        Bad(path, line_no, "'" + f + "' is not a decimal number");
      if (!std::isfinite(v)) Bad(path, line_no, "'" + f + "' is not finite");
      row.push_back(v);
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) Bad(path, line_no, "no data rows (a header line, then one vector per line)");
  return rows;
}

std::vector<LseMnistRow> RunLseMnist(const std::vector<std::vector<double>>& vectors,
                                     const std::vector<Format>& formats) {
  const auto& names = LseMnistAlgorithms();
  std::vector<LseMnistRow> out;
  for (const Format& format : formats) {
    const double u = format.UnitRoundoff();
    for (std::size_t v = 0; v < vectors.size(); ++v) {
      std::vector<double> stored;
      for (double x : vectors[v])
        stored.push_back(RoundToFormat(x, format, Rounding::kNearestEven));
      const std::size_t top =
          static_cast<std::size_t>(std::max_element(stored.begin(), stored.end()) - stored.begin());
      const double max_x = stored[top];
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
      const reference::Reference ref_lse = reference::ReferenceLse(stored);
      const reference::Reference ref_softmax = reference::ReferenceSoftmax(stored);
      if (!ref_lse.cert.certified || !ref_softmax.cert.certified)
        throw std::runtime_error("reference not certified for vector " + std::to_string(v) + ": " +
                                 ref_lse.cert.note + ref_softmax.cert.note);
      const double ref_y = ref_lse.as_double.at(0);
      const std::vector<double>& ref_g = ref_softmax.as_double;
#endif
      for (std::size_t alg = 0; alg < names.size(); ++alg) {
        const bool is_lse = alg < 2;
        Computed low, high;
        {
          EmulationScope scope(format, Rounding::kNearestEven);
          low = RunAlgorithm(alg, stored);
        }
        {
          EmulationScope scope(Fp32(), Rounding::kNearestEven);
          high = RunAlgorithm(alg, stored);  // a value of the format is a value of fp32
        }
        LseMnistRow row;
        row.dtype = format.name;
        row.vector = v;
        row.algorithm = names[alg];
        row.overflow = low.overflow;
        row.value = is_lse ? low.lse : low.g[top];
        const double tiny = format.MinNormal();
        row.err_fp32_u = RelError(low, high.lse, high.g, is_lse, tiny) / u;
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
        row.err_ref_u = RelError(low, ref_y, ref_g, is_lse, tiny) / u;
        row.err_ref_norm_u = NormError(low, ref_y, ref_g, is_lse) / u;
#else
        row.err_ref_u = std::numeric_limits<double>::quiet_NaN();
        row.err_ref_norm_u = std::numeric_limits<double>::quiet_NaN();
#endif
        row.bound_u = BoundU(alg, stored);
        row.max_x = max_x;
        row.sum_g = std::numeric_limits<double>::quiet_NaN();
        if (!is_lse) {
          row.sum_g = 0;
          for (double g : low.g) row.sum_g += g;
        }
        out.push_back(row);
      }
    }
  }
  return out;
}

}  // namespace carrier::studies

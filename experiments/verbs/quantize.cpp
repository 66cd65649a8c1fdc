// carrier quantize: round an array to a block-scaled format (precision/block_scaled.hpp) and print
// every element's code, element value and dequantised value with its block's scale.
//
// Output, CSV (default): a header line, then one row per element
//   i,row,col,x,code,element,block,scale_code,scale,tensor_scale,value
// where value = element * scale * tensor_scale exactly (block_scaled.hpp's identity); JSON: one
// object with the format, shape, per-tensor scales and the arrays x, codes, elements,
// scale_codes, scales, values. Numbers print shortest round-trip (cli/number_format.hpp).
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/number_format.hpp"
#include "inputs/generators.hpp"
#include "inputs/read_numbers.hpp"
#include "io/json.hpp"
#include "precision/block_scaled.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

namespace {

std::string Num(double v) { return Shortest(v); }

template <typename T, typename F>
std::string Array(const std::vector<T>& v, F text) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + text(v[i]);
  return s + "]";
}

}  // namespace

int RunQuantize(const std::vector<std::string>& argv) {
  Args args("quantize", argv, {"dtype", "input", "gen", "n", "seed", "rows", "cols", "format"});
  BlockScaledFormat f;
  try {
    f = ParseBlockScaledFormat(args.Require("dtype"));
  } catch (const std::invalid_argument& e) {
    args.Fail(e.what());
  }
  const std::string format = args.Choice("format", {"csv", "json"}, "csv");
  std::vector<double> x;
  std::string source;
  if (args.Get("input") && args.Get("gen"))
    args.Fail("give either --input FILE or --gen DIST, not both");
  if (auto path = args.Get("input")) {
    if (args.Get("n")) args.Fail("--n goes with --gen; a file's length is its own");
    try {
      x = inputs::ReadNumbersFile(*path, 1, /*allow_nonfinite=*/true).a;
    } catch (const inputs::InputError& e) {
      throw UsageError("carrier quantize: " + std::string(e.what()));
    }
    source = "file:" + *path;
  } else if (auto gen = args.Get("gen")) {
    inputs::GeneratorSpec g;
    try {
      g = inputs::ParseGenerator(*gen);
    } catch (const std::exception& e) {
      args.Fail(e.what());
    }
    const std::uint64_t n = args.RequireCount("n");
    if (n == 0) args.Fail("--n must be at least 1");
    if (n > (std::uint64_t{1} << 24)) args.Fail("--n must be at most 2^24 for quantize");
    const std::uint64_t seed = args.Count("seed", 1);
    x = inputs::Generate(g, n, seed);
    source = *gen + " seed " + std::to_string(seed);
  } else {
    args.Fail("give the values: --input FILE or --gen DIST --n N");
  }
  std::size_t rows = 1, cols = x.size();
  if (args.Get("rows") || args.Get("cols")) {
    if (!args.Get("rows") || !args.Get("cols")) args.Fail("--rows and --cols go together");
    rows = args.RequireCount("rows");
    cols = args.RequireCount("cols");
    if (rows * cols != x.size())
      args.Fail("--rows " + std::to_string(rows) + " x --cols " + std::to_string(cols) + " is " +
                std::to_string(rows * cols) + ", but there are " + std::to_string(x.size()) +
                " values");
  } else if (f.two_d) {
    args.Fail(f.name + " has two-dimensional blocks: give --rows R --cols C");
  }
  BlockScaledResult q;
  try {
    q = Quantize(f, x, rows, cols);
  } catch (const std::invalid_argument& e) {
    args.Fail(e.what());
  }
  std::ostringstream os;
  if (format == "csv") {
    os << "i,row,col,x,code,element,block,scale_code,scale,tensor_scale,value\n";
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::size_t b = q.Block(i);
      os << i << ',' << i / cols << ',' << i % cols << ',' << Num(x[i]) << ',' << int(q.codes[i])
         << ',' << Num(q.elements[i]) << ',' << b << ',' << int(q.scale_codes[b]) << ','
         << Num(q.scales[b]) << ',' << Num(q.tensor_scale) << ',' << Num(q.values[i]) << '\n';
    }
  } else {
    auto num = [](double v) { return io::JsonNumberText(Num(v)); };
    auto code = [](std::uint8_t c) { return std::to_string(int(c)); };
    io::JsonObject o;
    o.String("format", f.name)
        .String("input", source)
        .Raw("rows", std::to_string(rows))
        .Raw("cols", std::to_string(cols))
        .Raw("block", std::to_string(f.block))
        .Raw("two_d", f.two_d ? "true" : "false")
        .Raw("tensor_scale", num(q.tensor_scale))
        .Raw("encode_scale", num(q.encode_scale))
        .Raw("x", Array(x, num))
        .Raw("codes", Array(q.codes, code))
        .Raw("elements", Array(q.elements, num))
        .Raw("scale_codes", Array(q.scale_codes, code))
        .Raw("scales", Array(q.scales, num))
        .Raw("values", Array(q.values, num));
    os << o.Pretty() << "\n";
  }
  std::cout << os.str();
  return 0;
}

}  // namespace carrier::cli

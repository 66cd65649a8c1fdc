// carrier merge DIR... -o OUT: joins the output folders of `carrier sweep --shard K/N` runs (or
// of any runs of one config) into one folder like a single run's, after checking that they come
// from the same config and that every trial_id appears exactly once. Nothing is written unless
// every check passes.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "io/atomic_file.hpp"
#include "io/json.hpp"
#include "io/text_file.hpp"
#include "sweep/csv.hpp"
#include "sweep/manifest.hpp"
#include "sweep/runner.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

const char kMergeHelp[] =
    "usage: carrier merge DIR... -o OUT\n"
    "\n"
    "Joins sweep output folders of one config (typically its --shard 1/N .. N/N runs) into OUT:\n"
    "trials.csv sorted by trial_id, config.toml, and a manifest whose shard is null. Checks\n"
    "first that all come from the same config hash and input generator, finished, and that every\n"
    "trial_id appears exactly once; otherwise one line naming the problem, exit 2, nothing\n"
    "written.\n";

namespace {

std::string Field(const std::string& manifest, const std::string& key) {
  const auto v = sweep::ManifestField(manifest, key);
  return v ? io::JsonUnquote(*v) : "";
}

}  // namespace

int RunMerge(const std::vector<std::string>& argv) {
  std::vector<std::string> v = argv;
  for (auto& a : v)
    if (a == "-o") a = "--o";
  Args args("merge", v, {"o"}, {"quiet"}, 100000);
  if (!args.Get("o")) args.Fail("missing the output folder: carrier merge DIR... -o OUT");
  const std::string out = args.Require("o");
  const auto& dirs = args.Positional();
  if (dirs.empty()) args.Fail("give the folders to merge: carrier merge DIR... -o OUT");
  namespace fs = std::filesystem;
  if (fs::exists(out + "/trials.csv"))
    args.Fail(out + "/trials.csv already exists; merge into a new folder");

  std::string hash, config_text, config_path, start, end, jobs, generator;
  std::uint64_t total = 0;
  double wall = 0, ref_s = 0, trial_s = 0;
  std::map<std::uint64_t, std::pair<std::string, std::string>> rows;  // id -> (row, dir)
  for (const auto& d : dirs) {
    std::string m;
    try {  // a manifest embeds its config (at most 16 MiB): 64 MiB bounds a runaway file
      m = io::ReadTextFile(d + "/manifest.json", std::uint64_t{64} << 20);
    } catch (const std::runtime_error& e) {
      std::error_code ec;
      if (!std::filesystem::exists(d + "/manifest.json", ec))
        args.Fail(d + "/manifest.json is missing: not a sweep output folder");
      args.Fail(std::string(e.what()) + ": not a sweep output folder");
    }
    if (m.empty()) args.Fail(d + "/manifest.json is empty: not a sweep output folder");
    const std::string h = Field(m, "config_hash");
    const std::string t = Field(m, "trials_total");
    if (h.empty() || t.empty()) args.Fail(d + "/manifest.json lacks config_hash or trials_total");
    // Shards drawn by different input generators are not one run.
    const std::string g = sweep::ManifestGenerator(m);
    if (hash.empty()) {
      generator = g;
    } else if (g != generator) {
      args.Fail(d + " drew its inputs with generator " + sweep::GeneratorName(g) + ", " + dirs[0] +
                " with " + sweep::GeneratorName(generator) +
                ": shards of one sweep must share one generator");
    }
    if (hash.empty()) {
      hash = h;
      total = std::stoull(t);
      config_text = Field(m, "config");
      config_path = Field(m, "config_path");
      start = Field(m, "start_time");
      jobs = Field(m, "jobs");
    } else if (h != hash) {
      args.Fail(d + " comes from another config (hash " + h + ", " + dirs[0] + ": " + hash + ")");
    } else if (std::stoull(t) != total) {
      args.Fail(d + " counts " + t + " trials, " + dirs[0] + " " + std::to_string(total));
    }
    const std::string e = Field(m, "end_time");
    if (e.empty() || e == "null")
      args.Fail(d +
                " did not finish (its manifest has no end_time); complete it with "
                "carrier sweep --resume first");
    start = std::min(start, Field(m, "start_time"));
    end = std::max(end, e);
    wall = std::max(wall, std::atof(Field(m, "wall_seconds").c_str()));
    ref_s += std::atof(Field(m, "reference_seconds_total").c_str());
    trial_s += std::atof(Field(m, "trial_seconds_total").c_str());
    sweep::CsvFile f;
    try {
      f = sweep::ReadTrialsCsv(d + "/trials.csv");
    } catch (const std::exception& ex) {
      args.Fail(ex.what());
    }
    if (f.header + "\n" != sweep::CsvHeaderLine()) args.Fail(d + "/trials.csv has another header");
    if (f.partial_tail)
      args.Fail(d + "/trials.csv ends in a partial row; complete it with carrier sweep --resume");
    for (std::size_t i = 0; i < f.rows.size(); ++i) {
      const std::uint64_t id = f.ids[i];
      if (id >= total)
        args.Fail(d + "/trials.csv holds trial_id " + std::to_string(id) + " of " +
                  std::to_string(total) + " trials");
      auto [it, fresh] = rows.emplace(id, std::make_pair(f.rows[i], d));
      if (!fresh)
        args.Fail("trial_id " + std::to_string(id) + " appears in both " + it->second.second +
                  " and " + d);
    }
  }
  if (rows.size() != total) {
    std::string missing;
    std::uint64_t count = 0;
    for (std::uint64_t id = 0; id < total; ++id)
      if (!rows.count(id) && ++count <= 5)
        missing += (missing.empty() ? "" : " ") + std::to_string(id);
    args.Fail(std::to_string(total - rows.size()) + " of " + std::to_string(total) +
              " trials are missing (trial_id " + missing + (count > 5 ? " ..." : "") + ")");
  }

  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) args.Fail("cannot create " + out + ": " + ec.message());
  const io::DirLock folder_lock(out, "carrier merge");
  if (fs::exists(out + "/trials.csv"))  // checked again under the lock
    args.Fail(out + "/trials.csv already exists; merge into a new folder");
  const auto& cols = sweep::CsvColumns();
  const std::size_t c_status =
      static_cast<std::size_t>(std::find(cols.begin(), cols.end(), "status") - cols.begin());
  std::uint64_t failed = 0;
  std::string csv_text = sweep::CsvHeaderLine();
  for (const auto& [id, row] : rows) {
    csv_text += row.first + "\n";
    failed += sweep::SplitCsvLine(row.first)[c_status] != "ok";
  }
  sweep::ManifestRun mr;
  mr.config_path = config_path;
  mr.config_hash = hash;
  mr.config_text = config_text;
  mr.start_time = start;
  mr.end_time = end;
  mr.trials_total = total;
  mr.trials_in_shard = total;
  mr.trials_done = rows.size();
  mr.trials_failed = failed;
  mr.jobs = jobs.empty() ? 1 : static_cast<unsigned>(std::stoul(jobs));
  mr.wall_seconds = wall;
  mr.reference_seconds_total = ref_s;
  mr.trial_seconds_total = trial_s;
  mr.generator = generator;  // the shards' own, not this binary's
  // Each file whole or absent (io/atomic_file.hpp); trials.csv last, so its presence means the
  // merge completed, and a merge stopped before it can simply be run again. A failed write
  // (a full disk) removes what this merge wrote before it, so no manifest is left claiming
  // trials that no trials.csv holds.
  std::vector<std::string> written;
  try {
    for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
             {"config.toml", config_text},
             {"manifest.json", sweep::ManifestJson(mr)},
             {"trials.csv", csv_text}}) {
      io::WriteFileAtomic(out + "/" + name, text);
      written.push_back(out + "/" + name);
    }
  } catch (const io::IoError& e) {
    for (const std::string& path : written) fs::remove(path, ec);
    args.Fail(e.what());
  }
  std::printf("merge: %zu folders, %llu trials (%llu failed) -> %s/trials.csv\n", dirs.size(),
              static_cast<unsigned long long>(total), static_cast<unsigned long long>(failed),
              out.c_str());
  if (!args.Has("quiet")) sweep::PrintSummary(out + "/trials.csv");
  return 0;
}

}  // namespace carrier::cli

// experiments/io/json.hpp: every JSON document the experiments write or read (eval --format
// json, probe and tree outputs, the sweep manifest) goes through here; nlohmann-json does the
// work, in json.cpp alone (its header is heavy: no other translation unit includes it).
//
// Contract.
// - JsonQuote(s): s as a JSON string literal, nlohmann-json's escaping: quotes, backslashes and
//   every control character (\n \t \r \b \f, others \u00XX); bytes that are not UTF-8 become
//   U+FFFD. So the text is valid JSON whatever s holds (a file name with a control character,
//   say); for printable UTF-8 it is s between quotes, byte for byte as before nlohmann.
// - JsonNumberText(t): numbers are formatted by the project's own formatters
//   (cli/number_format.hpp Shortest, sweep/csv.hpp CsvNumber), never by nlohmann, so every number
//   prints identically in JSON, CSV and text. JSON has no NaN or infinity: their texts (nan,
//   inf, -inf) come back quoted, as eval has always written them.
// - JsonObject: one object written member by member, in order. A value is JSON text: String()
//   quotes, Raw() takes a number's text, true/false/null or a nested document as it is.
//   Compact() is {"k":v,...} on one line; Pretty() is one member per line, two spaces, `"k": v`
//   (the manifest's layout, which nlohmann's dump(2) also writes).
// - JsonMemberText(doc, key): the value of a top-level member of the JSON object `doc`, as JSON
//   text (a string stays quoted); nullopt when doc is not a JSON object (damaged, truncated,
//   not UTF-8) or has no such member. Never throws on bad text.
// - JsonUnquote(raw): the string a JSON string literal holds; raw itself when it is not one.
//   JsonUnquote(JsonQuote(s)) == s for every valid UTF-8 s.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace carrier::io {

std::string JsonQuote(std::string_view s);
std::string JsonNumberText(std::string text);
std::optional<std::string> JsonMemberText(const std::string& doc, const std::string& key);
std::string JsonUnquote(const std::string& raw);

class JsonObject {
 public:
  JsonObject& String(std::string key, std::string_view value) {
    return Raw(std::move(key), JsonQuote(value));
  }
  JsonObject& Raw(std::string key, std::string json_text) {
    members_.emplace_back(std::move(key), std::move(json_text));
    return *this;
  }
  JsonObject& Bool(std::string key, bool v) { return Raw(std::move(key), v ? "true" : "false"); }
  // Number text from a project formatter (JsonNumberText applied).
  JsonObject& Number(std::string key, std::string text) {
    return Raw(std::move(key), JsonNumberText(std::move(text)));
  }

  std::string Compact() const;
  std::string Pretty() const;
  // Key and JSON text of each member, in order (eval's text output prints them as a table).
  const std::vector<std::pair<std::string, std::string>>& Members() const { return members_; }

 private:
  std::vector<std::pair<std::string, std::string>> members_;
};

}  // namespace carrier::io

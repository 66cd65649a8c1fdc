// experiments/io/json.cpp: the one translation unit of experiments/ that includes
// nlohmann-json (contract in json.hpp).
#include "io/json.hpp"

#include <cctype>
#include <nlohmann/json.hpp>

namespace carrier::io {

std::string JsonQuote(std::string_view s) {
  // replace: a byte that is not UTF-8 becomes U+FFFD instead of an exception (type_error 316).
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonNumberText(std::string text) {
  const std::size_t digit = !text.empty() && text[0] == '-' ? 1 : 0;
  if (digit < text.size() && std::isdigit(static_cast<unsigned char>(text[digit]))) return text;
  return JsonQuote(text);  // nan, inf, -inf
}

std::string JsonObject::Compact() const {
  std::string out = "{";
  for (std::size_t i = 0; i < members_.size(); ++i)
    out += (i ? "," : "") + JsonQuote(members_[i].first) + ":" + members_[i].second;
  return out + "}";
}

std::string JsonObject::Pretty() const {
  std::string out = "{\n";
  for (std::size_t i = 0; i < members_.size(); ++i)
    out += "  " + JsonQuote(members_[i].first) + ": " + members_[i].second +
           (i + 1 < members_.size() ? ",\n" : "\n");
  return out + "}";
}

std::optional<std::string> JsonMemberText(const std::string& doc, const std::string& key) {
  // allow_exceptions = false: bad text gives a discarded value, not an exception.
  const nlohmann::json j = nlohmann::json::parse(doc, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  return it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonUnquote(const std::string& raw) {
  const nlohmann::json j = nlohmann::json::parse(raw, nullptr, false);
  if (j.is_discarded() || !j.is_string()) return raw;
  return j.get<std::string>();
}

}  // namespace carrier::io

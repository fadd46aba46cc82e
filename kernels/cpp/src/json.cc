#include "json.h"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <system_error>

namespace ctxbench {

std::string FormatDouble(double value) {
  if (!std::isfinite(value)) throw std::invalid_argument("non-finite number cannot be written as JSON");
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);  // shortest round-trip form
  if (res.ec != std::errc()) throw std::runtime_error("cannot format number");
  std::string s(buf, res.ptr);
  // Keep it visibly a real number ("2.0", not "2") so typed readers see a float.
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string QuoteJson(std::string_view value) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(value.size() + 2);
  out.push_back('"');
  for (unsigned char c : value) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xf]);
        } else {
          out.push_back(static_cast<char>(c));  // UTF-8 passes through unchanged
        }
    }
  }
  out.push_back('"');
  return out;
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_element_.empty()) {
    if (has_element_.back()) out_.push_back(',');
    has_element_.back() = true;
  }
}

JsonWriter& JsonWriter::Open(char bracket) {
  BeforeValue();
  out_.push_back(bracket);
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::Close(char bracket) {
  has_element_.pop_back();
  out_.push_back(bracket);
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  out_ += QuoteJson(key);
  out_.push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  out_ += QuoteJson(value);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  std::string s = FormatDouble(value);  // throws before anything is written
  BeforeValue();
  out_ += s;
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

}  // namespace ctxbench

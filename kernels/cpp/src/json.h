// Minimal streaming JSON writer for the kernel CLI's output (no external JSON library).
// Strings are escaped per RFC 8259; doubles are written in the shortest form that round-trips,
// and a non-finite double is refused (the contract's numbers are always finite).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ctxbench {

class JsonWriter {
 public:
  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  // Writes an object key; the next call writes its value.
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  // Throws std::invalid_argument for NaN or infinity.
  JsonWriter& Double(double value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  const std::string& str() const { return out_; }

 private:
  void BeforeValue();
  JsonWriter& Open(char bracket);
  JsonWriter& Close(char bracket);
  std::string out_;
  // One entry per open container: true once it holds an element (a comma is due before the next).
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

// Shortest decimal that round-trips to the same double ("0.5", "2.34", "1e-07"). Finite values only.
std::string FormatDouble(double value);

// JSON string literal for `value`, quotes included.
std::string QuoteJson(std::string_view value);

}  // namespace ctxbench

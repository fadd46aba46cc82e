// Unit checks for the JSON writer (run by kernels/tests/test_json_writer.py). Prints one line per
// failed check and exits 1 if any failed.
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "../src/json.h"

namespace {

int failures = 0;

void Expect(const std::string& got, const std::string& want, const char* what) {
  if (got != want) {
    std::printf("FAIL %s: got %s want %s\n", what, got.c_str(), want.c_str());
    ++failures;
  }
}

}  // namespace

int main() {
  using ctxbench::FormatDouble;
  using ctxbench::JsonWriter;
  using ctxbench::QuoteJson;

  Expect(QuoteJson("plain"), "\"plain\"", "plain string");
  Expect(QuoteJson("a\"b\\c"), "\"a\\\"b\\\\c\"", "quote and backslash");
  Expect(QuoteJson("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"", "short escapes");
  Expect(QuoteJson(std::string("\x01\x1f\x7f", 3)), "\"\\u0001\\u001f\\u007f\"", "control characters");
  Expect(QuoteJson(std::string("nul\0x", 5)), "\"nul\\u0000x\"", "embedded NUL");
  Expect(QuoteJson("µs 切换"), "\"µs 切换\"", "UTF-8 passes through");

  Expect(FormatDouble(2.34), "2.34", "shortest round trip");
  Expect(FormatDouble(49.47), "49.47", "shortest round trip 2");
  Expect(FormatDouble(4283), "4283.0", "integral double keeps a fraction");
  Expect(FormatDouble(0.1 + 0.2), "0.30000000000000004", "exact round trip");
  Expect(FormatDouble(1e-7), "1e-07", "exponent form");
  Expect(FormatDouble(-0.5), "-0.5", "negative");
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    bool threw = false;
    try {
      FormatDouble(bad);
    } catch (const std::invalid_argument&) {
      threw = true;
    }
    if (!threw) {
      std::printf("FAIL non-finite %f was formatted\n", bad);
      ++failures;
    }
  }

  JsonWriter w;
  w.BeginObject();
  w.Key("a").Int(1);
  w.Key("b").BeginArray().Double(0.5).Bool(true).Null().String("x").EndArray();
  w.Key("c").BeginObject().EndObject();
  w.Key("d").BeginArray().EndArray();
  w.Key("e").BeginArray().BeginObject().Key("k").Int(-3).EndObject().BeginObject().EndObject().EndArray();
  w.EndObject();
  Expect(w.str(), R"({"a":1,"b":[0.5,true,null,"x"],"c":{},"d":[],"e":[{"k":-3},{}]})", "writer structure");

  if (failures == 0) std::printf("ok\n");
  return failures == 0 ? 0 : 1;
}

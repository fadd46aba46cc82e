// ParamSpec::Parse and CanonicalString as a line filter, for kernels/tests/test_param_vectors.py (the
// golden vectors of kernels/contract/param-vectors.json). One request per line, tab-separated:
//   TYPE  MIN  MAX  CHOICES  INPUT
// MIN/MAX a number or "-" (none); CHOICES and INPUT hex-encoded bytes, choices joined by ','. Answers one
// line per request: "ok\t<canonical string, hex>" or "error\t<why>".
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "../src/registry.h"

namespace {

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string Hex(const std::string& s) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
  }
  return out;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

}  // namespace

int main() {
  using namespace ctxbench;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::vector<std::string> f = Split(line, '\t');
    if (f.size() != 5) {
      std::cout << "error\tbad request line" << std::endl;
      continue;
    }
    ParamSpec p;
    p.name = "p";
    if (f[0] == "int") p.type = ParamType::kInt;
    else if (f[0] == "float") p.type = ParamType::kFloat;
    else if (f[0] == "choice") p.type = ParamType::kChoice;
    else if (f[0] == "bool") p.type = ParamType::kBool;
    else p.type = ParamType::kString;
    if (f[1] != "-") p.min = std::strtod(f[1].c_str(), nullptr);
    if (f[2] != "-") p.max = std::strtod(f[2].c_str(), nullptr);
    if (!f[3].empty())
      for (const std::string& c : Split(f[3], ',')) p.choices.push_back(Unhex(c));
    std::string why;
    std::optional<ParamValue> v = p.Parse(Unhex(f[4]), &why);
    if (v) std::cout << "ok\t" << Hex(CanonicalString(*v)) << std::endl;
    else {
      for (char& c : why)
        if (static_cast<unsigned char>(c) < 0x20) c = '?';  // keep the answer on one line
      std::cout << "error\t" << why << std::endl;
    }
  }
  return 0;
}

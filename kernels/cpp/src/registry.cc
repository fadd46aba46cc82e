#include "registry.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

#include "json.h"

namespace ctxbench {

const char* ParamTypeName(ParamType type) {
  switch (type) {
    case ParamType::kInt: return "int";
    case ParamType::kFloat: return "float";
    case ParamType::kChoice: return "choice";
    case ParamType::kBool: return "bool";
    case ParamType::kString: return "string";
  }
  return "?";
}

// Python's repr of a float, byte for byte (the server writes canonical strings with it): the shortest
// round-tripping digits, in exponent form below 1e-4 and from 1e16 on, else positional with ".0" when
// integral. (FormatDouble's plain shortest form writes 1e+05 where repr writes 100000.0.)
static std::string CanonicalDouble(double value) {
  if (!std::isfinite(value)) throw std::invalid_argument("non-finite parameter value");
  double abs = std::fabs(value);
  bool exponent = abs != 0 && (abs < 1e-4 || abs >= 1e16);
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value,
                           exponent ? std::chars_format::scientific : std::chars_format::fixed);
  if (res.ec != std::errc()) throw std::runtime_error("cannot format number");
  std::string s(buf, res.ptr);
  if (!exponent && s.find('.') == std::string::npos) s += ".0";
  return s;
}

std::string CanonicalString(const ParamValue& value) {
  if (auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&value)) return CanonicalDouble(*d);
  if (auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  return std::get<std::string>(value);
}

namespace {

std::string RangeText(const ParamSpec& spec) {
  std::string lo = spec.min ? FormatDouble(*spec.min) : "-inf";
  std::string hi = spec.max ? FormatDouble(*spec.max) : "inf";
  if (spec.type == ParamType::kInt) {
    lo = spec.min ? std::to_string(static_cast<int64_t>(*spec.min)) : lo;
    hi = spec.max ? std::to_string(static_cast<int64_t>(*spec.max)) : hi;
  }
  return "[" + lo + ", " + hi + "]";
}

bool InRange(const ParamSpec& spec, double v) {
  return (!spec.min || v >= *spec.min) && (!spec.max || v <= *spec.max);
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A wire float (kernels/contract/README.md): -?(digits[.digits]|.digits)([eE][+-]?digits)?, nothing
// else; strtod alone also takes spaces, '+', hex, "inf" and "nan".
bool IsDecimalFloat(const std::string& s) {
  size_t i = (!s.empty() && s[0] == '-') ? 1 : 0, n = s.size(), mantissa = 0;
  while (i < n && IsDigit(s[i])) ++i, ++mantissa;
  if (i < n && s[i] == '.') {
    ++i;
    while (i < n && IsDigit(s[i])) ++i, ++mantissa;
  }
  if (mantissa == 0) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < n && IsDigit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == n;
}

// Characters (UTF-8 code points) in s: bytes that do not continue a sequence.
size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::optional<ParamValue> ParamSpec::Parse(const std::string& text, std::string* why) const {
  switch (type) {
    case ParamType::kInt: {
      // Strict decimal: optional '-', digits only (no '+', spaces, hex, or trailing junk).
      size_t start = (!text.empty() && text[0] == '-') ? 1 : 0;
      bool digits = text.size() > start;
      for (size_t i = start; i < text.size(); ++i) digits = digits && (text[i] >= '0' && text[i] <= '9');
      if (!digits) {
        *why = "parameter " + name + ": '" + text + "' is not an integer";
        return std::nullopt;
      }
      errno = 0;
      long long v = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE || !InRange(*this, static_cast<double>(v))) {
        *why = "parameter " + name + ": " + text + " is out of range " + RangeText(*this);
        return std::nullopt;
      }
      return ParamValue(static_cast<int64_t>(v));
    }
    case ParamType::kFloat: {
      char* end = nullptr;
      errno = 0;
      bool ok = IsDecimalFloat(text);
      double v = ok ? std::strtod(text.c_str(), &end) : NAN;
      ok = ok && end == text.c_str() + text.size() && std::isfinite(v) && errno != ERANGE;
      if (!ok) {
        *why = "parameter " + name + ": '" + text + "' is not a finite number";
        return std::nullopt;
      }
      if (!InRange(*this, v)) {
        *why = "parameter " + name + ": " + text + " is out of range " + RangeText(*this);
        return std::nullopt;
      }
      return ParamValue(v);
    }
    case ParamType::kBool:
      if (text == "true") return ParamValue(true);
      if (text == "false") return ParamValue(false);
      *why = "parameter " + name + ": '" + text + "' is not true or false";
      return std::nullopt;
    case ParamType::kChoice: {
      for (const auto& c : choices)
        if (c == text) return ParamValue(text);
      std::string list;
      for (const auto& c : choices) list += (list.empty() ? "" : "|") + c;
      *why = "parameter " + name + ": '" + text + "' is not one of " + list;
      return std::nullopt;
    }
    case ParamType::kString:
      if (CodePoints(text) > kMaxStringChars) {
        *why = "parameter " + name + ": longer than " + std::to_string(kMaxStringChars) + " characters";
        return std::nullopt;
      }
      if (text.find('\0') != std::string::npos) {
        *why = "parameter " + name + " contains a NUL character";
        return std::nullopt;
      }
      return ParamValue(text);
  }
  *why = "parameter " + name + ": unknown type";
  return std::nullopt;
}

int64_t GetInt(const Params& params, const std::string& name) { return std::get<int64_t>(params.at(name)); }
double GetFloat(const Params& params, const std::string& name) { return std::get<double>(params.at(name)); }
bool GetBool(const Params& params, const std::string& name) { return std::get<bool>(params.at(name)); }
const std::string& GetString(const Params& params, const std::string& name) {
  return std::get<std::string>(params.at(name));
}

std::vector<Kernel>& Registry() {
  static std::vector<Kernel> kernels;  // function-local: safe from static initialisation order
  return kernels;
}

const Kernel* FindKernel(const std::string& id) {
  for (const auto& k : Registry())
    if (k.spec.id == id) return &k;
  return nullptr;
}

ParamSpec IntParam(std::string name, int64_t def, int64_t min, int64_t max, std::vector<int64_t> sweep,
                   std::string help) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ParamType::kInt;
  p.default_value = def;
  p.min = static_cast<double>(min);
  p.max = static_cast<double>(max);
  for (int64_t v : sweep) p.sweep.emplace_back(v);
  p.help = std::move(help);
  return p;
}

ParamSpec ChoiceParam(std::string name, std::string def, std::vector<std::string> choices, std::string help) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ParamType::kChoice;
  p.default_value = std::move(def);
  p.choices = std::move(choices);
  p.help = std::move(help);
  return p;
}

double PerOpNs(double ops_per_second) { return std::round(1e10 / ops_per_second) / 10; }

SeedReference Seed(std::string seed, double value, std::string machine,
                   std::vector<std::pair<std::string, std::string>> params, std::string note, std::string unit) {
  return SeedReference{.seed = std::move(seed),
                       .value = value,
                       .unit = std::move(unit),
                       .machine = std::move(machine),
                       .params = std::move(params),
                       .note = std::move(note)};
}

ParamSpec StringParam(std::string name, std::string def, std::string help) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ParamType::kString;
  p.default_value = std::move(def);
  p.help = std::move(help);
  return p;
}

}  // namespace ctxbench

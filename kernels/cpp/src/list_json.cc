#include "list_json.h"

#include <optional>
#include <string>
#include <variant>

namespace ctxbench {
namespace {

void WriteOptionalNumber(JsonWriter& w, const std::optional<double>& v, ParamType type) {
  if (!v) w.Null();
  else if (type == ParamType::kInt) w.Int(static_cast<int64_t>(*v));
  else w.Double(*v);
}

}  // namespace

void WriteParamValue(JsonWriter& w, const ParamValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) w.Int(*i);
  else if (auto* d = std::get_if<double>(&v)) w.Double(*d);
  else if (auto* b = std::get_if<bool>(&v)) w.Bool(*b);
  else w.String(std::get<std::string>(v));
}

std::string ListJson() {
  JsonWriter w;
  w.BeginArray();
  for (const Kernel& k : Registry()) {
    const KernelSpec& s = k.spec;
    w.BeginObject();
    w.Key("id").String(s.id);
    w.Key("title").String(s.title);
    w.Key("family").String(s.family());
    w.Key("unit").String(s.unit);
    w.Key("description").String(s.description);
    w.Key("params").BeginArray();
    for (const ParamSpec& p : s.params) {
      w.BeginObject();
      w.Key("name").String(p.name);
      w.Key("type").String(ParamTypeName(p.type));
      w.Key("default");
      WriteParamValue(w, p.default_value);
      w.Key("min");
      WriteOptionalNumber(w, p.min, p.type);
      w.Key("max");
      WriteOptionalNumber(w, p.max, p.type);
      w.Key("sweep").BeginArray();
      for (const ParamValue& v : p.sweep) WriteParamValue(w, v);
      w.EndArray();
      w.Key("choices").BeginArray();
      for (const std::string& c : p.choices) w.String(c);
      w.EndArray();
      w.Key("help").String(p.help);
      w.EndObject();
    }
    w.EndArray();
    if (s.seed_reference) {
      const SeedReference& r = *s.seed_reference;
      w.Key("seed_reference").BeginObject();
      w.Key("seed").String(r.seed);
      w.Key("value").Double(r.value);
      w.Key("unit").String(r.unit);
      w.Key("machine").String(r.machine);
      w.Key("params").BeginObject();
      for (const auto& [name, value] : r.params) w.Key(name).String(value);
      w.EndObject();
      w.Key("note").String(r.note);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  return w.str() + "\n";
}

}  // namespace ctxbench

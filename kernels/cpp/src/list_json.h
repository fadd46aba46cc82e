// What `--list` prints (kernels/contract/kernel-cli.schema.json, $defs/list), and a typed parameter
// value as JSON (also in a --run result's params).
#pragma once

#include <string>

#include "json.h"
#include "registry.h"

namespace ctxbench {

void WriteParamValue(JsonWriter& w, const ParamValue& v);

// The `--list` array of every registered kernel, with a trailing newline.
std::string ListJson();

}  // namespace ctxbench

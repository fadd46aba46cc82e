// The kernel registry: every kernel's spec (what `--list` prints) and its Google Benchmark body.
// Family files (call.cc, syscall.cc, ...) add their kernels with a static KernelRegistrar.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ctxbench {

enum class ParamType { kInt, kFloat, kChoice, kBool, kString };

const char* ParamTypeName(ParamType type);

// A typed parameter value: int64_t (int), double (float), bool (bool), std::string (choice, string).
using ParamValue = std::variant<int64_t, double, bool, std::string>;

// Canonical string form (kernels/contract/README.md "Parameter values"): ints decimal, floats as Python's
// repr writes them, bools "true"/"false", choices and strings verbatim.
std::string CanonicalString(const ParamValue& value);

// The longest string parameter value, in characters (UTF-8 code points).
constexpr size_t kMaxStringChars = 4096;

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kInt;
  ParamValue default_value;
  std::optional<double> min;  // int and float only
  std::optional<double> max;
  std::vector<ParamValue> sweep;     // default sweep; empty: not swept by default
  std::vector<std::string> choices;  // choice only
  std::string help;

  // Parses a canonical string into a typed value; on failure returns nullopt and sets *why.
  std::optional<ParamValue> Parse(const std::string& text, std::string* why) const;
};

struct SeedReference {
  std::string seed;  // "000"
  double value = 0;
  std::string unit;
  std::string machine;
  std::vector<std::pair<std::string, std::string>> params;  // canonical strings
  std::string note;
};

struct KernelSpec {
  std::string id;
  std::string title;
  std::string unit = "ns/op";  // or "MB/s" (10^6 bytes/s) for kernels with bytes_per_op
  std::string description;
  std::vector<ParamSpec> params;
  std::optional<SeedReference> seed_reference;

  // The id's first segment (kernels/contract/README.md "Names"), so a kernel cannot name another family.
  std::string family() const { return id.substr(0, id.find('.')); }
};

using Params = std::map<std::string, ParamValue>;

int64_t GetInt(const Params& params, const std::string& name);
double GetFloat(const Params& params, const std::string& name);
bool GetBool(const Params& params, const std::string& name);
const std::string& GetString(const Params& params, const std::string& name);

struct Kernel {
  KernelSpec spec;
  // Google Benchmark body. One benchmark iteration is `ops_per_iteration(params)` ops of the unit.
  std::function<void(benchmark::State&, const Params&)> body;
  // Whether the body reports its own time with state.SetIterationTime (multi-process/thread kernels).
  bool manual_time = false;
  // Ops in one benchmark iteration (e.g. 2 context switches per pipe round trip). Default 1.
  std::function<double(const Params&)> ops_per_iteration;
  // Empty when the kernel can run on this host with these params; otherwise one line saying why not
  // (the CLI exits 3 with it).
  std::function<std::string(const Params&)> unsupported;
  // Empty when the params make sense together; otherwise one line saying why not (the CLI exits 2).
  // For checks a single param's min/max/choices cannot express (e.g. O_DIRECT needs 512-byte blocks).
  std::function<std::string(const Params&)> invalid;
  // Bytes one op moves; required when spec.unit is "MB/s" (samples are then 10^6 bytes per second and
  // the CLI adds the counter ns_per_op from the same time).
  std::function<double(const Params&)> bytes_per_op;
  // One thread that never blocks or waits (call, syscall, jmp, ucontext, coroutine): its CPU time should
  // equal its wall time on a quiet host. The CLI then adds the counters cpu_ns_per_op (the measuring
  // thread's user+sys CPU time per op, median over the repetitions) and cpu_wall_ratio (CPU time over wall
  // time of all timed repetitions); the agent re-measures a launch whose ratio says it waited for a CPU.
  bool cpu_bound = false;
  // A gang whose threads are always runnable (sched.yield): one of them pinned to one CPU uses all of it,
  // so a short sample whose counter cpu_share (its CPU time over the wall) is under cpu_bound's share
  // counts as disturbed. The switch count cannot tell: with another task always runnable there, every
  // yield hands it the CPU, every sample has switches, and the typical count is the host's.
  bool never_blocks = false;
};

std::vector<Kernel>& Registry();
const Kernel* FindKernel(const std::string& id);

struct KernelRegistrar {
  explicit KernelRegistrar(Kernel kernel) { Registry().push_back(std::move(kernel)); }
};

// A seed's rate (ops per second) as ns per op, rounded to 0.1 ns for the catalog.
double PerOpNs(double ops_per_second);

// The machines of the seeds that several kernels cite (../shared/seeds), written once.
constexpr const char* kSeed000Machine = "Intel Pentium G2030 @ 3.00GHz, Linux 3.16, 2014";
constexpr const char* kSeed000MachineCores = "Intel Pentium G2030 @ 3.00GHz (2 cores), Linux 3.16, 2014";
constexpr const char* kSeed004Machine = "Intel Xeon 2.13GHz, 64 GB, Linux (version not given), about 2014";

// A seed reference: what seed `seed` measured on `machine` at the parameter point `params` (canonical
// strings), in `unit`.
SeedReference Seed(std::string seed, double value, std::string machine,
                   std::vector<std::pair<std::string, std::string>> params, std::string note,
                   std::string unit = "ns/op");

// Convenience constructors for specs.
ParamSpec IntParam(std::string name, int64_t def, int64_t min, int64_t max, std::vector<int64_t> sweep,
                   std::string help);
ParamSpec ChoiceParam(std::string name, std::string def, std::vector<std::string> choices, std::string help);
ParamSpec StringParam(std::string name, std::string def, std::string help);

}  // namespace ctxbench

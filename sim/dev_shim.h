// dev_shim.h: the C++ side of the vl15-bindings `dev` cxx bridge. One
// DevModel wraps one Verilated multiport top (ib_switch_top, ib_ca_mp_top)
// and only moves bits between the per-port PortIn/PortOut structs, the
// DevIn/DevOut structs and the model's flat, packed ports (no protocol
// logic). Included by cxx-generated code: no Verilator or model headers here.
#pragma once

#include <cstdint>
#include <memory>

#include "rust/cxx.h"

namespace vl15 {

struct PortIn;
struct PortOut;
struct DevIn;
struct DevOut;
enum class DevKind : uint8_t;

class DevModel {
 public:
  virtual ~DevModel() = default;
  // rst_ni low for `cycles` cycles with every input idle (links up).
  virtual void reset(uint32_t cycles) = 0;
  // One clock cycle; ports_in holds external ports 1..N at 0..N-1. Unless
  // `all`, only the ports listed in `changed` (indices, any order) may have
  // inputs other than in the previous step: the others are not read. The
  // first step after construction or reset reads every port.
  virtual DevOut step(const DevIn& in, rust::Slice<const PortIn> ports_in,
                      rust::Slice<const uint8_t> changed, bool all) = 0;
  // The external ports' outputs of the last step (port p at p-1), held by
  // the model: valid until the next step or reset.
  virtual rust::Slice<const PortOut> ports_out() const = 0;
  // Count n cycles without evaluating (the caller knows the model is idle).
  virtual void skip(uint64_t n) = 0;
  virtual uint64_t cycle() const = 0;
  virtual uint32_t num_ports() const = 0;
  virtual uint32_t data_w() const = 0;
  virtual void trace_open(rust::Str path) = 0;
  virtual void trace_close() = 0;
  // A coverage build: write the model's coverage counts so far to `path`
  // and return true. Otherwise return false and write nothing.
  virtual bool coverage_write(rust::Str path) = 0;
};

// nports external ports at DataW data_w (64 or 128).
std::unique_ptr<DevModel> new_dev_model(DevKind kind, uint32_t nports, uint32_t data_w);

}  // namespace vl15

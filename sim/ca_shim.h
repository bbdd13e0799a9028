// ca_shim.h: the C++ side of the vl15-bindings cxx bridge. One CaModel wraps
// one Verilated ib_ca_top (DataW 32, 64 or 128) with its own VerilatedContext
// and an optional FST trace; it only moves bits between the CaIn/CaOut structs
// and the model's ports (no protocol logic).
//
// This header is included by the cxx-generated code, so it must not include
// any Verilator or model header: the model classes are only forward-declared
// here and the per-width implementation lives in ca_shim.cpp.
#pragma once

#include <cstdint>
#include <memory>

#include "rust/cxx.h"

// Verilated models of ib_ca_top (--prefix Vca32/Vca64/Vca128), defined in the
// generated headers that only ca_shim.cpp includes.
class Vca32;
class Vca64;
class Vca128;
class VerilatedContext;
class VerilatedFstC;

namespace vl15 {

// Shared structs, defined by the cxx-generated header (bindings/src/lib.rs).
struct CaIn;
struct CaOut;

// One simulation instance. Every method that evaluates the model may throw
// (a failing SV assertion, $fatal, $stop or $finish ends in a C++ exception,
// see vl_fatal in ca_shim.cpp); cxx turns that into a Rust Err. After such an
// error the instance refuses to evaluate again (its state is undefined).
class CaModel {
 public:
  virtual ~CaModel() = default;
  // rst_ni low for `cycles` clock cycles with every input 0; rst_ni goes high
  // with the next step (inputs applied while clk is low).
  virtual void reset(uint32_t cycles) = 0;
  // One clock cycle: apply `in` while clk is low, eval, capture the outputs
  // (combinational ones included), rising edge, eval, cycle += 1.
  virtual CaOut step(const CaIn& in) = 0;
  // step() for every element of `ins`, writing outs[k]; outs.size() >= ins.size().
  virtual void step_batch(rust::Slice<const CaIn> ins, rust::Slice<CaOut> outs) = 0;
  // Rising clock edges so far (reset cycles included).
  virtual uint64_t cycle() const = 0;
  // Start an FST dump at `path` (closing any open one). One sample per half
  // cycle; the clock period is 10 ns: cycle c is low at 10c ns, high at 10c+5 ns.
  virtual void trace_open(rust::Str path) = 0;
  // Flush and close the FST dump, if any.
  virtual void trace_close() = 0;
  // A coverage build: write the model's coverage counts so far to `path`
  // and return true. Otherwise return false and write nothing.
  virtual bool coverage_write(rust::Str path) = 0;
  virtual uint32_t data_w() const = 0;
};

// A new model of the given width (32, 64 or 128; throws otherwise).
std::unique_ptr<CaModel> new_ca_model(uint32_t data_w);

}  // namespace vl15

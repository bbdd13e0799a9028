// model_host.h: what every Verilated top needs around it in the shim, whatever
// its ports: its own VerilatedContext (reproducible random initial values,
// single-threaded), the clock (apply inputs while low, capture outputs, rising
// edge), reset, an optional FST dump, and the error policy (a fatal
// simulation error marks the instance dead and is rethrown to cxx as a C++
// exception). Port-specific code passes `apply`/`read` callables.
//
// Included only by shim .cpp files (it includes Verilator headers; the
// cxx-generated code must never see them).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "verilated.h"
#include "verilated_fst_c.h"

// Set around an eval() whose only changed input is the clock, for a model
// patched by sim/ico_skip.sh (defined in dev_shim.cpp).
extern thread_local bool vl15_ico_unchanged;

namespace vl15 {

// IcoSkip: M is patched by sim/ico_skip.sh (bindings/build.rs), so the
// rising edge's eval(), after which no input but the clock changed, skips
// the input-combinational region.
template <class M, bool IcoSkip = false>
class ModelHost {
 public:
  // `args` go to the model's constructor after (context, name).
  template <class... Args>
  explicit ModelHost(Args&&... args) : ctx_(new VerilatedContext) {
    ctx_->traceEverOn(true);
    // --x-initial unique: random initial register values, reproducible
    // (seed VL15_SEED, default 1; Verilator's seed 0 would mean "from time").
    int seed = 1;
    if (const char* s = std::getenv("VL15_SEED")) {
      const int v = std::atoi(s);
      if (v != 0) seed = v;
    }
    ctx_->randReset(2);
    ctx_->randSeed(seed);
    ctx_->fatalOnError(true);  // $stop and assertion failures go to vl_fatal
    ctx_->threads(1);          // single-threaded model: no worker pool
    enter();
    try {
      m_.reset(new M(ctx_.get(), "TOP", std::forward<Args>(args)...));
      // Model time units per ns (FST timestamps): the context's precision.
      for (int p = ctx_->timeprecision(); p < -9; ++p) tunit_ *= 10;
      m_->clk_i = 0;
      m_->rst_ni = 1;
    } catch (...) {
      m_.reset();
      ctx_.reset();
      Verilated::threadContextp(nullptr);
      throw;
    }
  }

  ~ModelHost() {
    // Verilator's destructors use the thread's context: make it ours, and
    // forget it afterwards so that it never dangles.
    enter();
    trace_close();
    m_.reset();
    ctx_.reset();
    Verilated::threadContextp(nullptr);
  }

  // A coverage build: write the context's coverage counts (every model in
  // it) to `path`; false in a build without coverage.
  bool coverage_write(const std::string& path) {
#if VM_COVERAGE
    enter();
    ctx_->coveragep()->write(path.c_str());
    return true;
#else
    (void)path;
    return false;
#endif
  }

  ModelHost(const ModelHost&) = delete;
  ModelHost& operator=(const ModelHost&) = delete;

  M& model() { return *m_; }
  const M& model() const { return *m_; }
  uint64_t cycle() const { return cycle_; }

  // Count `n` cycles without evaluating: only for a model whose state does
  // not change over them (idle, no input), so that FST timestamps and cycle
  // numbers stay those of the fabric around it.
  void skip(uint64_t n) { cycle_ += n; }

  // Evaluate once with the current inputs (after construction).
  template <class A>
  void settle(A&& apply) {
    guarded([&] {
      apply(*m_);
      m_->eval();
    });
  }

  // rst_ni low for `cycles` cycles; `apply` sets every other input to idle.
  template <class A>
  void reset(uint32_t cycles, A&& apply) {
    guarded([&] {
      for (uint32_t k = 0; k < cycles; ++k) {
        m_->rst_ni = 0;
        half_low(apply);
        half_high();
      }
    });
  }

  // One clock cycle: rst_ni high, `apply` while clk is low, eval, `read` the
  // outputs (combinational ones included), rising edge, eval.
  template <class A, class R>
  void step(A&& apply, R&& read) {
    guarded([&] { step_unguarded(apply, read); });
  }

  // Several steps under one guard (one exception boundary).
  template <class F>
  void batch(F&& f) {
    guarded(f);
  }

  template <class A, class R>
  void step_unguarded(A&& apply, R&& read) {
    m_->rst_ni = 1;
    half_low(apply);
    read(static_cast<const M&>(*m_));
    half_high();
  }

  void trace_open(const std::string& path) {
    trace_close();
    std::unique_ptr<VerilatedFstC> t(new VerilatedFstC);
    guarded([&] {
      m_->trace(t.get(), 99);
      t->open(path.c_str());
    });
    if (!t->isOpen()) throw std::runtime_error("cannot open FST trace " + path);
    tfp_ = t.release();
  }

  void trace_close() {
    if (tfp_) {
      tfp_->close();
      delete tfp_;
      tfp_ = nullptr;
    }
  }

 private:
  // Verilator's runtime reads the *thread's* context (e.g. in vl_stop): point
  // it at ours before every evaluation (the instance may have moved thread).
  void enter() {
    if (Verilated::threadContextp() != ctx_.get()) Verilated::threadContextp(ctx_.get());
  }

  template <class F>
  void guarded(F&& f) {
    if (!dead_.empty()) throw std::runtime_error("model stopped by an earlier error: " + dead_);
    enter();
    try {
      f();
    } catch (const std::exception& e) {
      dead_ = e.what();
      throw;
    }
  }

  uint64_t now(bool high) const { return (cycle_ * 10 + (high ? 5 : 0)) * tunit_; }

  template <class A>
  void half_low(A&& apply) {
    m_->clk_i = 0;
    apply(*m_);
    ctx_->time(now(false));
    m_->eval();
    if (tfp_) tfp_->dump(now(false));
  }

  void half_high() {
    m_->clk_i = 1;
    ctx_->time(now(true));
    if constexpr (IcoSkip) {
      struct Reset {
        ~Reset() { vl15_ico_unchanged = false; }
      } reset;
      vl15_ico_unchanged = true;
      m_->eval();
    } else {
      m_->eval();
    }
    if (tfp_) tfp_->dump(now(true));
    ++cycle_;
  }

  // Member order matters: the model is destroyed before its context.
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<M> m_;
  VerilatedFstC* tfp_ = nullptr;  // raw: owned, deleted in trace_close()
  uint64_t cycle_ = 0;
  uint64_t tunit_ = 1;
  std::string dead_;
};

// -----------------------------------------------------------------------------
// Bit fields of Verilator port values. Ports of <= 8/16/32/64 bits are
// CData/SData/IData/QData; wider ones VlWide<N> (32-bit words, LSW first).
// Verilator assumes unused upper bits of an input are 0: callers mask.
// -----------------------------------------------------------------------------
inline uint64_t low_mask(unsigned n) { return n >= 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1); }

template <class T>
inline uint64_t get_bits(const T& v, unsigned lsb, unsigned n) {
  return (static_cast<uint64_t>(v) >> lsb) & low_mask(n);
}
template <std::size_t N>
inline uint64_t get_bits(const VlWide<N>& v, unsigned lsb, unsigned n) {
  uint64_t r = 0;
  for (unsigned got = 0; got < n;) {
    const unsigned bit = lsb + got;
    const unsigned w = bit / 32, off = bit % 32;
    const unsigned take = (32 - off) < (n - got) ? (32 - off) : (n - got);
    const uint64_t part = (static_cast<uint64_t>(v[w]) >> off) & low_mask(take);
    r |= part << got;
    got += take;
  }
  return r;
}

template <class T>
inline void set_bits(T& v, unsigned lsb, unsigned n, uint64_t x) {
  const uint64_t m = low_mask(n) << lsb;
  v = static_cast<T>((static_cast<uint64_t>(v) & ~m) | ((x << lsb) & m));
}
template <std::size_t N>
inline void set_bits(VlWide<N>& v, unsigned lsb, unsigned n, uint64_t x) {
  for (unsigned put = 0; put < n;) {
    const unsigned bit = lsb + put;
    const unsigned w = bit / 32, off = bit % 32;
    const unsigned take = (32 - off) < (n - put) ? (32 - off) : (n - put);
    const uint32_t m = static_cast<uint32_t>(low_mask(take) << off);
    v[w] = (v[w] & ~m) | (static_cast<uint32_t>((x >> put) << off) & m);
    put += take;
  }
}

}  // namespace vl15

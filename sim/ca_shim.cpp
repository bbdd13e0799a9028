// ca_shim.cpp: CaModel for each Verilated width of ib_ca_top, and the
// Verilator user hooks (vl_fatal, vl_finish) that turn a simulation error into
// a C++ exception. The Verilator runtime is compiled with -DVL_USER_FATAL
// -DVL_USER_FINISH by bindings/build.rs so that these definitions are used.
#include "ca_shim.h"

#include <array>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "verilated.h"
#include "verilated_fst_c.h"
#include "vl15-bindings/src/lib.rs.h"

#include "Vca128.h"
#include "Vca32.h"
#include "Vca64.h"

// Defined in dev_shim.cpp; read by the ib_ca_top models (sim/ico_skip.sh).
extern thread_local bool vl15_ico_unchanged;

// -----------------------------------------------------------------------------
// Verilator user hooks
// -----------------------------------------------------------------------------

namespace {

std::string where(const char* filename, int linenum, const char* hier) {
  std::string s;
  if (filename && filename[0]) {
    s += filename;
    s += ':';
    s += std::to_string(linenum);
    s += ": ";
  }
  if (hier && hier[0]) {
    s += '(';
    s += hier;
    s += ") ";
  }
  return s;
}

}  // namespace

// A failing assertion or $stop reaches here through vl_stop (fatalOnError is
// on by default), $fatal and internal Verilator errors directly. Instead of
// aborting the process, throw: the cxx `Result` turns it into a Rust Err and
// only the caller's test fails. The assertion's own message was already
// printed on stdout by the model.
void vl_fatal(const char* filename, int linenum, const char* hier, const char* msg) {
  VerilatedContext* c = Verilated::threadContextp();
  c->gotError(true);
  c->gotFinish(true);
  Verilated::runFlushCallbacks();
  throw std::runtime_error("Verilator fatal: " + where(filename, linenum, hier) +
                           (msg ? msg : "(no message)"));
}

// $finish: the default prints and, on the second call, exits the process.
void vl_finish(const char* filename, int linenum, const char* hier) {
  Verilated::threadContextp()->gotFinish(true);
  Verilated::runFlushCallbacks();
  throw std::runtime_error("Verilog $finish: " + where(filename, linenum, hier));
}

namespace vl15 {
namespace {

// Port value conversions. Verilator holds ports of <= 8/16/32/64 bits in
// CData/SData/IData/QData and wider ones in VlWide<N> (32-bit words, LSW
// first). Inputs are masked to the port width: Verilator assumes the unused
// upper bits of a port are 0.
template <class T>
inline void put_data(T& dst, const std::array<uint64_t, 2>& v) {
  dst = static_cast<T>(v[0]);  // 32- or 64-bit port: truncation is the mask
}
inline void put_data(VlWide<4>& dst, const std::array<uint64_t, 2>& v) {
  dst[0] = static_cast<uint32_t>(v[0]);
  dst[1] = static_cast<uint32_t>(v[0] >> 32);
  dst[2] = static_cast<uint32_t>(v[1]);
  dst[3] = static_cast<uint32_t>(v[1] >> 32);
}
template <class T>
inline std::array<uint64_t, 2> get_data(const T& src) {
  return {static_cast<uint64_t>(src), 0};
}
inline std::array<uint64_t, 2> get_data(const VlWide<4>& src) {
  return {static_cast<uint64_t>(src[0]) | (static_cast<uint64_t>(src[1]) << 32),
          static_cast<uint64_t>(src[2]) | (static_cast<uint64_t>(src[3]) << 32)};
}

// Model M built with DataW = W.
template <class M, unsigned W>
class CaModelImpl final : public CaModel {
  static constexpr uint16_t KeepMask = static_cast<uint16_t>((1u << (W / 8)) - 1);

 public:
  CaModelImpl() : ctx_(new VerilatedContext) {
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
    // The model is single-threaded: no worker thread pool (the default is
    // one thread per core, i.e. idle workers per instance).
    ctx_->threads(1);
    enter();
    try {
      m_.reset(new M(ctx_.get(), "TOP"));
      // Model time units per ns (FST timestamps, $time); the model sets the
      // context's precision (Verilator's default 1ps: 1000 units per ns).
      for (int p = ctx_->timeprecision(); p < -9; ++p) tunit_ *= 10;
      m_->clk_i = 0;
      m_->rst_ni = 1;
      apply(CaIn{});
      guarded([&] { m_->eval(); });
    } catch (...) {
      m_.reset();
      ctx_.reset();
      Verilated::threadContextp(nullptr);
      throw;
    }
  }

  ~CaModelImpl() override {
    // Verilator's destructors (e.g. ~VerilatedScope) use the thread's context:
    // make it ours, and forget it afterwards so that it never dangles. Final
    // blocks are not run (the design has none).
    enter();
    trace_close();
    m_.reset();
    ctx_.reset();
    Verilated::threadContextp(nullptr);
  }

  void reset(uint32_t cycles) override {
    guarded([&] {
      const CaIn zero{};
      for (uint32_t k = 0; k < cycles; ++k) {
        m_->rst_ni = 0;
        half_low(zero);
        half_high();
      }
    });
  }

  CaOut step(const CaIn& in) override {
    CaOut o{};
    guarded([&] { step1(in, o); });
    return o;
  }

  void step_batch(rust::Slice<const CaIn> ins, rust::Slice<CaOut> outs) override {
    const size_t n = ins.size();
    if (outs.size() < n) throw std::invalid_argument("step_batch: outs shorter than ins");
    if (n == 0) return;
    // rust::Slice accessors are out-of-line calls: take the pointers once.
    const CaIn* ip = ins.data();
    CaOut* op = outs.data();
    guarded([&] {
      for (size_t k = 0; k < n; ++k) step1(ip[k], op[k]);
    });
  }

  uint64_t cycle() const override { return cycle_; }

  void trace_open(rust::Str path) override {
    trace_close();
    std::unique_ptr<VerilatedFstC> t(new VerilatedFstC);
    const std::string p(path);
    guarded([&] {
      m_->trace(t.get(), 99);
      t->open(p.c_str());
    });
    if (!t->isOpen()) throw std::runtime_error("cannot open FST trace " + p);
    tfp_ = t.release();  // the first sample is the next half cycle
  }

  void trace_close() override {
    if (tfp_) {
      tfp_->close();
      delete tfp_;
      tfp_ = nullptr;
    }
  }

  bool coverage_write(rust::Str path) override {
#if VM_COVERAGE
    enter();
    ctx_->coveragep()->write(std::string(path).c_str());
    return true;
#else
    (void)path;
    return false;
#endif
  }

  uint32_t data_w() const override { return W; }

 private:
  // Several contexts in one process: Verilator's runtime reads the *thread's*
  // context (Verilated::threadContextp) e.g. in vl_stop, so point it at ours
  // before every evaluation (the instance may have moved to another thread).
  void enter() {
    if (Verilated::threadContextp() != ctx_.get()) Verilated::threadContextp(ctx_.get());
  }

  // Run f with the error policy: refuse after an earlier fatal error; on an
  // exception mark the instance dead and rethrow it to cxx.
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

  void half_low(const CaIn& in) {
    m_->clk_i = 0;
    apply(in);
    ctx_->time(now(false));
    m_->eval();
    if (tfp_) tfp_->dump(now(false));
  }

  void half_high() {
    m_->clk_i = 1;
    ctx_->time(now(true));
    {
      // Only the clock changed since half_low's eval(): the model, patched
      // by sim/ico_skip.sh (bindings/build.rs), skips its input-
      // combinational region, which would compute what it already holds.
      struct Reset {
        ~Reset() { vl15_ico_unchanged = false; }
      } reset;
      vl15_ico_unchanged = true;
      m_->eval();
    }
    if (tfp_) tfp_->dump(now(true));
    ++cycle_;
  }

  void step1(const CaIn& in, CaOut& o) {
    m_->rst_ni = 1;
    half_low(in);
    read(o);
    half_high();
  }

  void apply(const CaIn& i) {
    M& m = *m_;
    put_data(m.rx_tdata_i, i.rx_tdata);
    m.rx_tkeep_i = i.rx_tkeep & KeepMask;
    m.rx_tvalid_i = i.rx_tvalid;
    m.rx_tlast_i = i.rx_tlast;
    m.tx_tready_i = i.tx_tready;
    put_data(m.dtx_tdata_i, i.dtx_tdata);
    m.dtx_tkeep_i = i.dtx_tkeep & KeepMask;
    m.dtx_tvalid_i = i.dtx_tvalid;
    m.dtx_tlast_i = i.dtx_tlast;
    m.sma_rx_tready_i = i.sma_rx_tready;
    m.sm_rx_tready_i = i.sm_rx_tready;
    m.sm_rq_post_i = i.sm_rq_post;
    m.sm_rq_post_n_i = i.sm_rq_post_n;
    m.sm_rq_clr_i = i.sm_rq_clr;
    put_data(m.sma_tx_tdata_i, i.sma_tx_tdata);
    m.sma_tx_tvalid_i = i.sma_tx_tvalid;
    m.sma_tx_tlast_i = i.sma_tx_tlast;
    m.sma_tx_slid_i = i.sma_tx_slid;
    m.sma_tx_dlid_i = i.sma_tx_dlid;
    m.sma_tx_sl_i = i.sma_tx_sl & 0xF;
    put_data(m.sm_tx_tdata_i, i.sm_tx_tdata);
    m.sm_tx_tvalid_i = i.sm_tx_tvalid;
    m.sm_tx_tlast_i = i.sm_tx_tlast;
    m.sm_tx_dlid_i = i.sm_tx_dlid;
    m.sm_tx_sl_i = i.sm_tx_sl & 0xF;
    m.sm_tx_path_bits_i = i.sm_tx_path_bits & 0x7F;
    put_data(m.trap_tx_tdata_i, i.trap_tx_tdata);
    m.trap_tx_tvalid_i = i.trap_tx_tvalid;
    m.trap_tx_tlast_i = i.trap_tx_tlast;
    m.reg_we_i = i.reg_we;
    m.reg_addr_i = i.reg_addr;
    m.reg_wdata_i = i.reg_wdata;
    m.link_up_i = i.link_up;
  }

  void read(CaOut& o) const {
    const M& m = *m_;
    o.tx_tdata = get_data(m.tx_tdata_o);
    o.tx_tkeep = m.tx_tkeep_o;
    o.tx_tvalid = m.tx_tvalid_o;
    o.tx_tlast = m.tx_tlast_o;
    o.drx_tdata = get_data(m.drx_tdata_o);
    o.drx_tkeep = m.drx_tkeep_o;
    o.drx_tvalid = m.drx_tvalid_o;
    o.drx_tlast = m.drx_tlast_o;
    o.drx_tuser = m.drx_tuser_o;
    o.drx_reason = m.drx_reason_o;
    o.dtx_tready = m.dtx_tready_o;
    o.sma_rx_tdata = get_data(m.sma_rx_tdata_o);
    o.sma_rx_tvalid = m.sma_rx_tvalid_o;
    o.sma_rx_tlast = m.sma_rx_tlast_o;
    o.sma_rx_slid = m.sma_rx_slid_o;
    o.sma_rx_dlid = m.sma_rx_dlid_o;
    o.sma_rx_sl = m.sma_rx_sl_o;
    o.sma_rx_port = m.sma_rx_port_o;
    o.sma_rx_mgmt_class = m.sma_rx_mgmt_class_o;
    o.sma_rx_hop_ptr = m.sma_rx_hop_ptr_o;
    o.sma_rx_hop_cnt = m.sma_rx_hop_cnt_o;
    o.sma_rx_mkey_viol = m.sma_rx_mkey_viol_o;
    o.sma_rx_mkey_mask = m.sma_rx_mkey_mask_o;
    o.sm_rx_tdata = get_data(m.sm_rx_tdata_o);
    o.sm_rx_tvalid = m.sm_rx_tvalid_o;
    o.sm_rx_tlast = m.sm_rx_tlast_o;
    o.sm_rx_slid = m.sm_rx_slid_o;
    o.sm_rx_dlid = m.sm_rx_dlid_o;
    o.sm_rx_sl = m.sm_rx_sl_o;
    o.sm_rx_port = m.sm_rx_port_o;
    o.sm_rx_mgmt_class = m.sm_rx_mgmt_class_o;
    o.sm_rx_hop_ptr = m.sm_rx_hop_ptr_o;
    o.sm_rx_hop_cnt = m.sm_rx_hop_cnt_o;
    o.sma_tx_tready = m.sma_tx_tready_o;
    o.sm_tx_tready = m.sm_tx_tready_o;
    o.trap_tx_tready = m.trap_tx_tready_o;
    o.reg_rdata = m.reg_rdata_o;
    o.sq_tx_beat = m.sq_tx_beat_o;
    o.port_state = m.port_state_o;
    o.mkey_prot = m.mkey_prot_o;
    o.mkey_viols = m.mkey_viols_o;
    o.idle = m.idle_o;
  }

  // Member order matters: the model is destroyed before its context.
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<M> m_;
  VerilatedFstC* tfp_ = nullptr;  // raw: owned, deleted in trace_close()
  uint64_t cycle_ = 0;
  uint64_t tunit_ = 1;  // model time units per ns
  std::string dead_;    // non-empty after a fatal error: its message
};

}  // namespace

std::unique_ptr<CaModel> new_ca_model(uint32_t data_w) {
  switch (data_w) {
    case 32:
      return std::unique_ptr<CaModel>(new CaModelImpl<Vca32, 32>());
    case 64:
      return std::unique_ptr<CaModel>(new CaModelImpl<Vca64, 64>());
    case 128:
      return std::unique_ptr<CaModel>(new CaModelImpl<Vca128, 128>());
    default:
      throw std::invalid_argument("DataW must be 32, 64 or 128, got " + std::to_string(data_w));
  }
}

}  // namespace vl15

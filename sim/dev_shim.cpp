// dev_shim.cpp: DevModel for the multiport CA (one Verilated ib_ca_mp_top)
// and for the switch (sw_mgmt_tile and one sw_port_tile per port, composed
// by sim/sw_tiles.h). The Verilator user hooks (vl_fatal, vl_finish) live in
// ca_shim.cpp; the host machinery (context, clock, reset, FST, error policy)
// in model_host.h.
//
// Packed per-port vectors of ib_ca_mp_top: port p (1..N) sits at index p-1,
// e.g. rx_tdata_i[(p-1)*DataW +: DataW], port_state_o at [4(p-1) +: 4];
// sw_mgmt_tile's port_state_o has port 0 at [3:0] and port p at [4p +: 4].
#include "dev_shim.h"

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "model_host.h"
#include "vl15-bindings/src/dev.rs.h"

#include "Vcamp1w128.h"
#include "Vcamp1w64.h"
#include "Vcamp2w128.h"
#include "Vcamp2w64.h"
#include "Vswmgmt128.h"
#include "Vswmgmt64.h"
#include "Vswtile128.h"
#include "Vswtile64.h"
#include "sw_tiles.h"

// The flag of the models bindings/build.rs patches with sim/ico_skip.sh:
// the switch's tiles (sim/sw_tiles.h) and ib_ca_top (sim/ca_shim.cpp).
thread_local bool vl15_ico_unchanged = false;

namespace vl15 {
namespace {

using Data = std::array<uint64_t, 2>;

template <class T>
inline void put_beat(T& v, unsigned idx, unsigned w, const Data& d) {
  const unsigned lsb = idx * w;
  if constexpr (!std::is_integral_v<T>) {
    if (lsb % 32 == 0 && (w == 64 || w == 128)) {  // whole words: the common case
      const unsigned k = lsb / 32;
      v[k] = static_cast<uint32_t>(d[0]);
      v[k + 1] = static_cast<uint32_t>(d[0] >> 32);
      if (w == 128) {
        v[k + 2] = static_cast<uint32_t>(d[1]);
        v[k + 3] = static_cast<uint32_t>(d[1] >> 32);
      }
      return;
    }
  }
  set_bits(v, lsb, w < 64 ? w : 64, d[0]);
  if (w > 64) set_bits(v, lsb + 64, w - 64, d[1]);
}
template <class T>
inline Data get_beat(const T& v, unsigned idx, unsigned w) {
  const unsigned lsb = idx * w;
  if constexpr (!std::is_integral_v<T>) {
    if (lsb % 32 == 0 && (w == 64 || w == 128)) {  // whole words: the common case
      const unsigned k = lsb / 32;
      Data d{uint64_t{v[k]} | (uint64_t{v[k + 1]} << 32), 0};
      if (w == 128) d[1] = uint64_t{v[k + 2]} | (uint64_t{v[k + 3]} << 32);
      return d;
    }
  }
  Data d{get_bits(v, lsb, w < 64 ? w : 64), 0};
  if (w > 64) d[1] = get_bits(v, lsb + 64, w - 64);
  return d;
}
inline Data get_mad(uint64_t v) { return {v, 0}; }
template <std::size_t K>
inline Data get_mad(const VlWide<K>& v) {
  return {get_bits(v, 0, 64), K > 2 ? get_bits(v, 64, 64) : 0};
}
inline void put_mad(uint64_t& v, const Data& d) { v = d[0]; }
inline void put_mad(uint32_t& v, const Data& d) { v = static_cast<uint32_t>(d[0]); }
template <std::size_t K>
inline void put_mad(VlWide<K>& v, const Data& d) {
  set_bits(v, 0, 64, d[0]);
  if (K > 2) set_bits(v, 64, 64, d[1]);
}

inline void check_ports(std::size_t n, std::size_t in, rust::Slice<const uint8_t> changed) {
  if (in != n) {
    throw std::invalid_argument("step: expected " + std::to_string(n) + " ports, got " +
                                std::to_string(in));
  }
  for (const uint8_t k : changed) {
    if (k >= n) {
      throw std::invalid_argument("step: port index " + std::to_string(k) + " of " +
                                  std::to_string(n) + " ports");
    }
  }
}

// The host side (SMA, SM, traps, registers; the switch's port-0 GMP streams
// and status), under the same port names on ib_ca_mp_top (Switch = false)
// and sw_mgmt_tile (Switch = true).
template <unsigned W, bool Switch, class H>
void apply_host(H& m, const DevIn& i) {
  constexpr uint64_t KeepMask = (uint64_t{1} << (W / 8)) - 1;
  m.sma_rx_tready_i = i.sma_rx_tready;
  m.sm_rx_tready_i = i.sm_rx_tready;
  if constexpr (!Switch) {
    m.sm_rq_post_i = i.sm_rq_post;
    m.sm_rq_post_n_i = i.sm_rq_post_n;
    m.sm_rq_clr_i = i.sm_rq_clr;
    m.sm_rq_port_i = i.sm_rq_port;
  }
  put_mad(m.sma_tx_tdata_i, i.sma_tx_tdata);
  m.sma_tx_tvalid_i = i.sma_tx_tvalid;
  m.sma_tx_tlast_i = i.sma_tx_tlast;
  m.sma_tx_slid_i = i.sma_tx_slid;
  m.sma_tx_dlid_i = i.sma_tx_dlid;
  m.sma_tx_sl_i = i.sma_tx_sl & 0xF;
  put_mad(m.sm_tx_tdata_i, i.sm_tx_tdata);
  m.sm_tx_tvalid_i = i.sm_tx_tvalid;
  m.sm_tx_tlast_i = i.sm_tx_tlast;
  m.sm_tx_dlid_i = i.sm_tx_dlid;
  m.sm_tx_sl_i = i.sm_tx_sl & 0xF;
  m.sm_tx_path_bits_i = i.sm_tx_path_bits & 0x7F;
  put_mad(m.trap_tx_tdata_i, i.trap_tx_tdata);
  m.trap_tx_tvalid_i = i.trap_tx_tvalid;
  m.trap_tx_tlast_i = i.trap_tx_tlast;
  if constexpr (!Switch) {
    m.sma_tx_port_i = i.sma_tx_port;
    m.sm_tx_port_i = i.sm_tx_port;
    m.trap_tx_port_i = i.trap_tx_port;
  } else {
    put_beat(m.gmp_tx_tdata_i, 0, W, i.gmp_tx_tdata);
    m.gmp_tx_tkeep_i = i.gmp_tx_tkeep & KeepMask;
    m.gmp_tx_tvalid_i = i.gmp_tx_tvalid;
    m.gmp_tx_tlast_i = i.gmp_tx_tlast;
  }
  m.reg_we_i = i.reg_we;
  m.reg_addr_i = i.reg_addr;
  m.reg_wdata_i = i.reg_wdata;
}

template <unsigned W, bool Switch, class H>
void read_host(const H& m, DevOut& o) {
  o.sma_rx_tdata = get_mad(m.sma_rx_tdata_o);
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
  o.sm_rx_tdata = get_mad(m.sm_rx_tdata_o);
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
  o.idle = m.idle_o;
  if constexpr (Switch) {
    o.port_state_change = m.port_state_change_o;
    o.port0_state = static_cast<uint8_t>(get_bits(m.port_state_o, 0, 4));
    o.gmp_rx_tdata = get_beat(m.gmp_rx_tdata_o, 0, W);
    o.gmp_rx_tkeep = static_cast<uint16_t>(m.gmp_rx_tkeep_o);
    o.gmp_rx_tvalid = m.gmp_rx_tvalid_o;
    o.gmp_rx_tlast = m.gmp_rx_tlast_o;
    o.gmp_rx_tuser = m.gmp_rx_tuser_o;
    o.gmp_rx_reason = m.gmp_rx_reason_o;
    o.gmp_tx_tready = m.gmp_tx_tready_o;
    o.port0_mkey_prot = m.mkey_prot_o;
    o.port0_mkey_viols = m.mkey_viols_o;
  } else {
    o.port_state_change = false;
    o.port0_state = 0;
    o.gmp_rx_tdata = Data{0, 0};
    o.gmp_rx_tkeep = 0;
    o.gmp_rx_tvalid = false;
    o.gmp_rx_tlast = false;
    o.gmp_rx_tuser = false;
    o.gmp_rx_reason = 0;
    o.gmp_tx_tready = false;
    o.port0_mkey_prot = 0;
    o.port0_mkey_viols = 0;
  }
}

// ib_ca_mp_top: DataW W, N external ports, one Verilated model.
template <class M, unsigned W, unsigned N>
class CaMpModel final : public DevModel {
  static constexpr unsigned B = W / 8;
  static constexpr uint64_t KeepMask = (uint64_t{1} << B) - 1;

 public:
  CaMpModel() {
    host_.settle([&](M& m) { idle_inputs(m); });
  }

  void reset(uint32_t cycles) override {
    host_.reset(cycles, [&](M& m) { idle_inputs(m); });
  }

  // Every port is read and written in every step (N is 1 or 2).
  DevOut step(const DevIn& in, rust::Slice<const PortIn> ports_in,
              rust::Slice<const uint8_t> changed, bool) override {
    check_ports(N, ports_in.size(), changed);
    const PortIn* pi = ports_in.data();
    DevOut o{};
    host_.step([&](M& m) { apply(m, in, pi); }, [&](const M& m) { read(m, o, po_.data()); });
    return o;
  }
  rust::Slice<const PortOut> ports_out() const override { return {po_.data(), N}; }

  void skip(uint64_t n) override { host_.skip(n); }
  uint64_t cycle() const override { return host_.cycle(); }
  uint32_t num_ports() const override { return N; }
  uint32_t data_w() const override { return W; }
  void trace_open(rust::Str path) override { host_.trace_open(std::string(path)); }
  void trace_close() override { host_.trace_close(); }
  bool coverage_write(rust::Str path) override { return host_.coverage_write(std::string(path)); }

 private:
  void idle_inputs(M& m) {
    const DevIn zero{};
    std::array<PortIn, N> ports{};
    for (auto& p : ports) p.link_up = true;
    apply(m, zero, ports.data());
  }

  void apply(M& m, const DevIn& i, const PortIn* p) {
    for (unsigned k = 0; k < N; ++k) {
      put_beat(m.rx_tdata_i, k, W, p[k].rx_tdata);
      set_bits(m.rx_tkeep_i, k * B, B, p[k].rx_tkeep & KeepMask);
      set_bits(m.rx_tvalid_i, k, 1, p[k].rx_tvalid);
      set_bits(m.rx_tlast_i, k, 1, p[k].rx_tlast);
      set_bits(m.tx_tready_i, k, 1, p[k].tx_tready);
      set_bits(m.link_up_i, k, 1, p[k].link_up);
      put_beat(m.dtx_tdata_i, k, W, p[k].dtx_tdata);
      set_bits(m.dtx_tkeep_i, k * B, B, p[k].dtx_tkeep & KeepMask);
      set_bits(m.dtx_tvalid_i, k, 1, p[k].dtx_tvalid);
      set_bits(m.dtx_tlast_i, k, 1, p[k].dtx_tlast);
    }
    apply_host<W, false>(m, i);
  }

  void read(const M& m, DevOut& o, PortOut* p) const {
    for (unsigned k = 0; k < N; ++k) {
      p[k].tx_tdata = get_beat(m.tx_tdata_o, k, W);
      p[k].tx_tkeep = static_cast<uint16_t>(get_bits(m.tx_tkeep_o, k * B, B));
      p[k].tx_tvalid = get_bits(m.tx_tvalid_o, k, 1);
      p[k].tx_tlast = get_bits(m.tx_tlast_o, k, 1);
      p[k].port_state = static_cast<uint8_t>(get_bits(m.port_state_o, 4 * k, 4));
      p[k].drx_tdata = get_beat(m.drx_tdata_o, k, W);
      p[k].drx_tkeep = static_cast<uint16_t>(get_bits(m.drx_tkeep_o, k * B, B));
      p[k].drx_tvalid = get_bits(m.drx_tvalid_o, k, 1);
      p[k].drx_tlast = get_bits(m.drx_tlast_o, k, 1);
      p[k].drx_tuser = get_bits(m.drx_tuser_o, k, 1);
      p[k].drx_reason = static_cast<uint8_t>(get_bits(m.drx_reason_o, k * 3, 3));
      p[k].dtx_tready = get_bits(m.dtx_tready_o, k, 1);
      p[k].mkey_prot = static_cast<uint8_t>(get_bits(m.mkey_prot_o, 2 * k, 2));
      p[k].mkey_viols = static_cast<uint16_t>(get_bits(m.mkey_viols_o, 16 * k, 16));
      p[k].sq_tx_beat = get_bits(m.sq_tx_beat_o, k, 1);
    }
    read_host<W, false>(m, o);
  }

  // The 1-port models are built free-running and patched by sim/ico_skip.sh
  // (bindings/build.rs).
  ModelHost<M, N == 1> host_;
  std::array<PortOut, N> po_{};
};

// The switch as ModelHost sees a model: clk_i and rst_ni, eval(), trace().
// eval() with the clock low settles the composition; the first eval after
// the clock rose is its rising edge.
template <class MgmtM, class TileM, unsigned W>
struct SwitchTop {
  using Tiles = SwTiles<MgmtM, TileM, W>;
  SwitchTop(VerilatedContext* ctx, const char*, unsigned nports) : tiles(ctx, nports) {}
  void eval() {
    tiles.set_reset(rst_ni);
    if (clk_i && !last_clk) {
      tiles.posedge();
    } else {
      tiles.settle();
    }
    last_clk = clk_i;
  }
  void trace(VerilatedFstC* tfp, int levels) { tiles.trace(tfp, levels); }
  uint8_t clk_i = 0;
  uint8_t rst_ni = 1;
  bool last_clk = false;
  Tiles tiles;
};

// ib_switch_top of nports external ports (1..64) at DataW W, as tiles.
template <class MgmtM, class TileM, unsigned W>
class SwitchModel final : public DevModel {
  using Top = SwitchTop<MgmtM, TileM, W>;
  static constexpr unsigned B = W / 8;
  static constexpr uint64_t KeepMask = (uint64_t{1} << B) - 1;

 public:
  explicit SwitchModel(unsigned nports)
      : n_(nports), host_(nports), last_po_(nports), listed_(nports, 0) {
    host_.settle([&](Top& m) { idle_inputs(m); });
  }

  void reset(uint32_t cycles) override {
    host_.reset(cycles, [&](Top& m) { idle_inputs(m); });
    settled_ = false;  // the next step evaluates
    all_next_ = true;  // and reads every port (reset drove them idle)
  }

  DevOut step(const DevIn& in, rust::Slice<const PortIn> ports_in,
              rust::Slice<const uint8_t> changed, bool all) override {
    check_ports(n_, ports_in.size(), changed);
    const PortIn* pi = ports_in.data();
    select(changed, all || all_next_);
    all_next_ = false;
    // ib_switch_top's idle contract: idle, and no input presented (no
    // valid, no register write, the register address and every link as
    // before): the switch does not change, so the cycle is only counted.
    // Its outputs are those of the last evaluated cycle only if that cycle
    // changed nothing either (`settled_`): the edge of a cycle with a link
    // edge, say, changes a PortState the next cycle shows.
    const bool q = quiet(in, pi);
    if (q && settled_) {
      host_.skip(1);
      return last_o_;
    }
    const bool was_idle = last_o_.idle;
    DevOut o{};
    host_.step([&](Top& m) { apply(m, in, pi); }, [&](const Top&) { read(host_.model(), o); });
    settled_ = q && was_idle && o.idle;
    last_o_ = o;
    last_reg_addr_ = in.reg_addr;
    return o;
  }

  rust::Slice<const PortOut> ports_out() const override {
    return {last_po_.data(), last_po_.size()};
  }

  void skip(uint64_t n) override { host_.skip(n); }
  uint64_t cycle() const override { return host_.cycle(); }
  uint32_t num_ports() const override { return n_; }
  uint32_t data_w() const override { return W; }
  void trace_open(rust::Str path) override { host_.trace_open(std::string(path)); }
  void trace_close() override { host_.trace_close(); }
  bool coverage_write(rust::Str path) override { return host_.coverage_write(std::string(path)); }

 private:
  void idle_inputs(Top& m) {
    PortIn idle{};
    idle.link_up = true;
    for (unsigned k = 0; k < n_; ++k) apply_port(m, k, idle);
    held_.clear();
    apply_host<W, true>(m.tiles.mgmt(), DevIn{});
  }

  // The ports this step reads, ascending, into sel_: those the caller
  // says changed (every port when `all`), and those that presented a beat
  // in the last step (a beat held is a beat presented again).
  void select(rust::Slice<const uint8_t> changed, bool all) {
    sel_.clear();
    if (all) {
      for (unsigned k = 0; k < n_; ++k) sel_.push_back(k);
      held_.clear();
      return;
    }
    for (const uint8_t k : changed) {
      if (!listed_[k]) {
        listed_[k] = 1;
        sel_.push_back(k);
      }
    }
    for (const unsigned k : held_) {
      if (!listed_[k]) {
        listed_[k] = 1;
        sel_.push_back(k);
      }
    }
    held_.clear();
    std::sort(sel_.begin(), sel_.end());
    for (const unsigned k : sel_) listed_[k] = 0;
  }

  // Writes the selected ports' inputs (the idle inputs of the constructor
  // and of reset write every port).
  void apply(Top& m, const DevIn& i, const PortIn* p) {
    for (const unsigned k : sel_) {
      apply_port(m, k, p[k]);
      if (p[k].rx_tvalid) held_.push_back(k);
    }
    apply_host<W, true>(m.tiles.mgmt(), i);
  }

  void apply_port(Top& m, unsigned k, const PortIn& p) {
    using D = std::remove_cvref_t<decltype(std::declval<TileM&>().rx_tdata_i)>;
    static const D none{};
    if (!p.rx_tvalid) {  // the beat is not read: no conversion
      m.tiles.set_port(k + 1, none, 0, false, false, p.tx_tready, p.link_up);
      return;
    }
    D d{};
    put_beat(d, 0, W, p.rx_tdata);
    m.tiles.set_port(k + 1, d, p.rx_tkeep & KeepMask, true, p.rx_tlast, p.tx_tready, p.link_up);
  }

  // The outputs into last_po_ (a tile that was not evaluated since the
  // last read keeps its outputs) and `o`.
  void read(Top& m, DevOut& o) {
    const MgmtM& g = m.tiles.mgmt();
    m.tiles.take_touched([&](unsigned p) {
      const TileM& t = m.tiles.tile(p);
      PortOut& q = last_po_[p - 1];
      q.tx_tdata = get_beat(t.tx_tdata_o, 0, W);
      q.tx_tkeep = t.tx_tkeep_o;
      q.tx_tvalid = t.tx_tvalid_o;
      q.tx_tlast = t.tx_tlast_o;
    });
    // PortStates change only with a tile's state (port 0's view of them).
    if (m.tiles.states_version() != states_ver_) {
      states_ver_ = m.tiles.states_version();
      for (unsigned k = 0; k < n_; ++k) {
        last_po_[k].port_state = static_cast<uint8_t>(get_bits(g.port_state_o, 4 * (k + 1), 4));
      }
    }
    read_host<W, true>(g, o);
  }

  bool quiet(const DevIn& in, const PortIn* pi) const {
    if (in.sma_tx_tvalid || in.sm_tx_tvalid || in.trap_tx_tvalid || in.gmp_tx_tvalid ||
        in.reg_we || in.reg_addr != last_reg_addr_) {
      return false;
    }
    for (const unsigned k : sel_) {
      if (pi[k].rx_tvalid || pi[k].link_up != host_.model().tiles.link_up(k + 1)) return false;
    }
    return true;
  }

  unsigned n_;
  ModelHost<Top> host_;
  // The outputs and the inputs of the last evaluated cycle, and whether
  // that cycle's edge left the switch as it was (idle, no input).
  bool settled_ = false;
  DevOut last_o_{};
  std::vector<PortOut> last_po_;
  uint16_t last_reg_addr_ = 0;
  uint32_t states_ver_ = 0;  // SwTiles::states_version() at the last read
  // The ports a step reads (select()), those that presented a beat in the
  // last evaluated step, and a scratch mark per port for select().
  std::vector<unsigned> sel_;
  std::vector<unsigned> held_;
  std::vector<uint8_t> listed_;
  bool all_next_ = true;  // the first step reads every port
};

}  // namespace

std::unique_ptr<DevModel> new_dev_model(DevKind kind, uint32_t nports, uint32_t data_w) {
  if (data_w != 64 && data_w != 128) {
    throw std::invalid_argument("the fabric's models are built at DataW 64 and 128, not " +
                                std::to_string(data_w));
  }
  const bool wide = data_w == 128;
  switch (kind) {
    case DevKind::Switch:
      if (nports < 1 || nports > 64) {
        throw std::invalid_argument("a switch has 1..64 external ports, not " +
                                    std::to_string(nports));
      }
      if (wide) return std::make_unique<SwitchModel<Vswmgmt128, Vswtile128, 128>>(nports);
      return std::make_unique<SwitchModel<Vswmgmt64, Vswtile64, 64>>(nports);
    case DevKind::CaMp1:
    case DevKind::CaMp2: {
      const uint32_t n = kind == DevKind::CaMp1 ? 1 : 2;
      if (nports != n) {
        throw std::invalid_argument("the " + std::to_string(n) + "-port CA model has " +
                                    std::to_string(n) + " ports, not " + std::to_string(nports));
      }
      if (n == 1) {
        if (wide) return std::make_unique<CaMpModel<Vcamp1w128, 128, 1>>();
        return std::make_unique<CaMpModel<Vcamp1w64, 64, 1>>();
      }
      if (wide) return std::make_unique<CaMpModel<Vcamp2w128, 128, 2>>();
      return std::make_unique<CaMpModel<Vcamp2w64, 64, 2>>();
    }
    default:
      throw std::invalid_argument("unknown device kind " + std::to_string(static_cast<int>(kind)));
  }
}

}  // namespace vl15

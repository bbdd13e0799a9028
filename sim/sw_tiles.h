// sw_tiles.h: a switch of any radix up to 64 as separately Verilated tiles
// (docs/fabric.md "Port tiles"): one sw_mgmt_tile (port 0 and the shared
// parts) and one sw_port_tile per external port, every model built once at
// MaxPorts = 64 and instanced as often as the radix needs. This class only
// connects wires, exactly as ib_switch_top's crossbar does, and evaluates a
// tile only in the cycles in which it may change: the cycles its clock gate
// would open (its clk_en_o), or in which one of its inputs changed. All
// switch behaviour is in the RTL; the unit harness sim/unit/sw_tiles runs
// this composition beside ib_switch_top Verilated as one model and compares
// every output in every cycle.
//
// One clock cycle is settle() (clock low: inputs in, outputs valid) then
// posedge(). Within settle(), the combinational paths between tiles are
// followed in their one order: register-driven outputs of the tiles (heads,
// requests, LFT lookups, states) -> port 0 and the outputs' arbiters (LFT
// grants, "granted beat taken") -> the inputs, which use them at the edge.
//
// MgmtM / TileM: the Verilated sw_mgmt_tile and sw_port_tile (MaxPorts 64,
// the tile with ClkGate 0: this class is its clock gate), at DataW W. The
// models share the caller's VerilatedContext.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "verilated.h"

// Set by the host around an eval() of a switch tile model whose inputs it
// did not write since that model's previous eval(): the model, patched by
// sim/ico_skip.sh, then skips its input-combinational region, which would
// compute what it already holds. Defined once per program (dev_shim.cpp,
// the sw_mgmt_tile harness).
extern thread_local bool vl15_ico_unchanged;

namespace vl15 {

namespace swt {
// m.eval(); `same`: no input of m was written since its last eval().
template <class M>
inline void eval(M& m, bool same) {
  struct Reset {
    ~Reset() { vl15_ico_unchanged = false; }
  } reset;
  vl15_ico_unchanged = same;
  m.eval();
}

template <class T>
inline bool bit(const T& v, unsigned i) {
  if constexpr (std::is_integral_v<T>) {
    return (v >> i) & 1u;
  } else {
    return (v[i / 32] >> (i % 32)) & 1u;
  }
}
template <class T>
inline void put_bit(T& v, unsigned i, bool b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::remove_reference_t<decltype(v)>;
    v = static_cast<U>(b ? (v | (U{1} << i)) : (v & ~(U{1} << i)));
  } else {
    const uint32_t m = uint32_t{1} << (i % 32);
    v[i / 32] = b ? (v[i / 32] | m) : (v[i / 32] & ~m);
  }
}
// The lowest set bit of a one-hot (or zero) vector of `n` bits, or -1.
template <class T>
inline int first_bit(const T& v, unsigned n) {
  if constexpr (std::is_integral_v<T>) {
    if (v == 0) return -1;
    return __builtin_ctzll(static_cast<uint64_t>(v));
  } else {
    for (unsigned w = 0; w * 32 < n; ++w) {
      if (v[w]) return static_cast<int>(w * 32 + __builtin_ctz(v[w]));
    }
    return -1;
  }
}
}  // namespace swt

template <class MgmtM, class TileM, unsigned W>
class SwTiles {
 public:
  static constexpr unsigned kMaxPorts = 64;
  static constexpr unsigned kNp = kMaxPorts + 1;
  static constexpr uint8_t kStateDown = 1;

  SwTiles(VerilatedContext* ctx, unsigned nports) : n_(nports) {
    if (nports < 1 || nports > kMaxPorts) {
      throw std::invalid_argument("a switch has 1.." + std::to_string(kMaxPorts) +
                                  " external ports, not " + std::to_string(nports));
    }
    mgmt_.reset(new MgmtM(ctx, "mgmt"));
    tiles_.resize(n_ + 1);
    st_.resize(n_ + 1);
    wire_.resize(n_ + 1);
    for (unsigned p = 1; p <= n_; ++p) {
      const std::string name = "port" + std::to_string(p);
      tiles_[p].reset(new TileM(ctx, name.c_str()));
      TileM& t = *tiles_[p];
      t.clk_i = 0;
      t.rst_ni = 1;
      t.port_i = static_cast<uint8_t>(p);
      t.num_ports_i = static_cast<uint8_t>(n_);
      t.link_up_i = 1;
      t.tx_tready_i = 1;
      t.rx_tvalid_i = 0;
      t.reg_we_i = 0;
      t.reg_addr_i = 0;
      t.lft_gnt_i = 0;
      t.lft_rsp_i = 0;
      clear_xbar_inputs(t);
      mark(p);
    }
    touched_flag_.assign(n_ + 1, 0);
    for (unsigned p = 1; p <= n_; ++p) touch(p);
    // Every wire from a tile starts idle; ports beyond the radix have no
    // tile and stay so (Down, not busy, no lookups).
    MgmtM& m = *mgmt_;
    m.clk_i = 0;
    m.rst_ni = 1;
    m.num_ports_i = static_cast<uint8_t>(n_);
    for (unsigned p = 1; p <= kMaxPorts; ++p) m.tile_state_i[p - 1] = kStateDown;
    for (unsigned r = 0; r < 2 * kMaxPorts; ++r) {
      swt::put_bit(m.tile_lft_req_i, r, false);
      m.tile_lft_lid_i[r] = 0;
    }
    for (unsigned p = 0; p < kMaxPorts; ++p) {
      swt::put_bit(m.tile_state_chg_i, p, false);
      swt::put_bit(m.tile_busy_i, p, false);
    }
    m.port_rdata_i = 0;
    m.od_vcrc_i = 0;
    clear_xbar_inputs(m);
    settle();
  }

  SwTiles(const SwTiles&) = delete;
  SwTiles& operator=(const SwTiles&) = delete;

  unsigned num_ports() const { return n_; }
  // Port 0's model: the switch's host side (SMA, SM, traps, GMPs, registers,
  // status) has the same port names as ib_switch_top's. Set its inputs
  // before settle(); read its outputs after.
  MgmtM& mgmt() { return *mgmt_; }
  const MgmtM& mgmt() const { return *mgmt_; }
  // External port p's model (1..num_ports): tx_* outputs, valid after settle().
  const TileM& tile(unsigned p) const { return *tiles_[p]; }
  // The link of external port p as last set (set_port).
  bool link_up(unsigned p) const { return wire_[p].link_up; }
  // Changes whenever port 0's view of the tiles' states may have changed
  // (its port_state_o, port_state_all_o); starts at 1.
  uint32_t states_version() const { return ps_ver_; }
  // Calls f(p) once for every tile evaluated since the last call (the
  // others' outputs are as they were then), and forgets them.
  template <class F>
  void take_touched(F&& f) {
    for (const unsigned p : touched_) {
      f(p);
      touched_flag_[p] = 0;
    }
    touched_.clear();
  }
  // Every model into one waveform (port 0 as "mgmt", port p as "port<p>");
  // call before the trace file is opened. A tile that is not evaluated
  // keeps its values, as a gated tile does.
  template <class T>
  void trace(T* tfp, int levels) {
    mgmt_->trace(tfp, levels);
    for (unsigned p = 1; p <= n_; ++p) tiles_[p]->trace(tfp, levels);
  }

  void set_reset(bool rst_n) {
    if (rst_n == static_cast<bool>(mgmt_->rst_ni)) return;
    mgmt_->rst_ni = rst_n;
    m_in_dirty_ = true;
    for (unsigned p = 1; p <= n_; ++p) {
      tiles_[p]->rst_ni = rst_n;
      mark(p);
    }
  }

  // The wire side of external port p (1..num_ports): the beat arriving (data
  // as the model's rx_tdata_i type), the far end's ready, the link.
  template <class D>
  void set_port(unsigned p, const D& data, uint32_t keep, bool valid, bool last, bool tready,
                bool link_up) {
    // Most ports are idle in most cycles: compare against the wire's last
    // values here rather than touch the tile's model (a cache miss each).
    Wire& w = wire_[p];
    if (!valid && !w.valid && tready == w.tready && link_up == w.link_up) return;
    TileM& t = *tiles_[p];
    if (valid) {
      t.rx_tdata_i = data;
      t.rx_tkeep_i = keep;
      t.rx_tlast_i = last;
    }
    if (valid || valid != w.valid || tready != w.tready || link_up != w.link_up) {
      mark(p);
    }
    t.rx_tvalid_i = valid;
    t.tx_tready_i = tready;
    t.link_up_i = link_up;
    w = Wire{valid, tready, link_up};
  }

  // Clock low: evaluate what may have changed and follow the wires, so that
  // every output (port 0's and the tiles' tx_*) is valid for this cycle.
  void settle() {
    MgmtM& m = *mgmt_;
    m.clk_i = 0;
    // The register bus: port 0 decodes which tile it addresses (its
    // decode depends on the bus alone: unchanged bus, unchanged answer).
    if (m.reg_we_i != bus_we_ || m.reg_addr_i != bus_addr_ || m.reg_wdata_i != bus_wdata_) {
      bus_we_ = m.reg_we_i;
      bus_addr_ = m.reg_addr_i;
      bus_wdata_ = m.reg_wdata_i;
      eval_mgmt(false);
      sync_states();
      route_reg_bus();
    }
    // Configuration from port 0 (registers): the runtime port count changes
    // every tile's effective state, so it wakes them all.
    if (m.n_o != n_run_) {
      n_run_ = m.n_o;
      for (unsigned p = 1; p <= n_; ++p) {
        tiles_[p]->n_i = n_run_;
        mark(p);
      }
    }
    // Each locked output receives its granted input's head: register
    // outputs of the input, current since its last edge.
    xbar_heads();
    // Tiles with work or changed inputs: settle their outputs (an
    // evaluation may mark more: they are appended and settled too).
    for (std::size_t k = 0; k < cand_.size(); ++k) {
      const unsigned p = cand_[k];
      Tile& s = st_[p];
      s.run = s.en || s.dirty;
      if (s.run) eval_tile(p);
    }
    // Port 0: the requests of its inputs (the tiles' went out as they were
    // evaluated) and the addressed tile's register read data.
    requests_of(0, *mgmt_, m_v_out_, m_d_out_);
    const unsigned tgt = m.reg_port_o;
    m.port_rdata_i = (tgt >= 1 && tgt <= n_) ? tiles_[tgt]->reg_rdata_o : 0;
    // The host's inputs and the tiles' wires may all have changed.
    eval_mgmt(false);
    sync_states();
    // Back to the inputs: "granted beat taken", LFT grants and entries.
    xbar_selects();
    lft_to_tiles();
  }

  // The rising edge, for port 0 and every tile that may change. Every model
  // samples the inputs of this cycle: the tiles first (their configuration
  // from port 0 is copied before port 0 is clocked), then port 0 (what it
  // reads of the tiles is copied only after), then the tiles' new outputs
  // go out on their wires.
  void posedge() {
    for (const unsigned p : cand_) {
      Tile& s = st_[p];
      if (!s.run) continue;
      TileM& t = *tiles_[p];
      refresh_config(t, s);
      if (t.clk_i) {  // woken after the settle (a request, a grant): the low phase first
        t.clk_i = 0;
        eval_model(t, s);
      }
      t.clk_i = 1;
      eval_model(t, s);
      touch(p);
      s.en = t.clk_en_o;
      s.dirty = false;
    }
    // Port 0's edge, unless its clock gate is shut (its enable, from this
    // cycle's settle, covers every input that could change it): then the
    // model does not see the clock rise at all, as the gated flops do not.
    MgmtM& m = *mgmt_;
    if (m.clk_en_o) {
      m.clk_i = 1;
      eval_mgmt(!m_in_dirty_);
    }
    const std::size_t clocked = cand_.size();
    for (std::size_t k = 0; k < clocked; ++k) {
      if (st_[cand_[k]].run) after_tile(cand_[k]);
    }
    // The next cycle's candidates: tiles whose clock stays enabled, and
    // those marked since (their inputs changed).
    std::size_t keep = 0;
    for (std::size_t k = 0; k < cand_.size(); ++k) {
      const unsigned p = cand_[k];
      Tile& s = st_[p];
      s.run = false;
      if (s.en || s.dirty) {
        cand_[keep++] = p;
      } else {
        s.listed = false;
      }
    }
    cand_.resize(keep);
  }

 private:
  // The wire side of a port as last set (the tile's rx_tvalid_i,
  // tx_tready_i, link_up_i).
  struct Wire {
    bool valid = false;
    bool tready = true;
    bool link_up = true;
  };

  struct Tile {
    bool en = true;       // its clock enable after its last evaluation
    bool dirty = true;    // an input changed since then
    bool run = false;     // evaluated in this cycle
    uint32_t ps_ver = 0;  // version of port_state_i it holds
    int v_out = -1, d_out = -1;  // the output its VL15 / data head requests
    bool reg_bus = false; // it holds the register bus of a write or read
    bool listed = false;  // in cand_
    bool in_dirty = true; // an input of its model was written since its last eval()
  };

  // Tile p was evaluated: its outputs may differ from the last read.
  void touch(unsigned p) {
    if (!touched_flag_[p]) {
      touched_flag_[p] = 1;
      touched_.push_back(p);
    }
  }

  // Tile p may change in this cycle (an input changed): a candidate.
  void mark(unsigned p) {
    Tile& s = st_[p];
    s.dirty = true;
    s.in_dirty = true;
    if (!s.listed) {
      s.listed = true;
      cand_.push_back(p);
    }
  }

  // The output a one-hot request vector names, or -1 (also for an output
  // beyond the radix: ib_switch_top of this radix has no such wire; only
  // the random state before a reset can name one).
  template <class X>
  int requested_output(const X& reqv) const {
    const int q = swt::first_bit(reqv, kNp);
    return q <= static_cast<int>(n_) ? q : -1;
  }

  // Settle tile p with the clock low.
  void eval_tile(unsigned p) {
    TileM& t = *tiles_[p];
    refresh_config(t, st_[p]);
    t.clk_i = 0;
    eval_model(t, st_[p]);
    touch(p);
    after_tile(p);
  }

  void eval_model(TileM& t, Tile& s) {
    swt::eval(t, !s.in_dirty);
    s.in_dirty = false;
  }
  // Port 0's eval(); `same`: none of its inputs was written since its last.
  void eval_mgmt(bool same) {
    swt::eval(*mgmt_, same);
    m_in_dirty_ = false;
  }

  // Inputs that a tile reads only while it routes a packet (it is then
  // clocked): copied just before it is evaluated.
  void refresh_config(TileM& t, Tile& s) {
    const MgmtM& m = *mgmt_;
    if (t.port0_lid_i != m.port0_lid_o || t.linear_top_i != m.linear_top_o) {
      t.port0_lid_i = m.port0_lid_o;
      t.linear_top_i = m.linear_top_o;
      s.in_dirty = true;
    }
    if (s.ps_ver != ps_ver_) {
      for (unsigned q = 0; q < kNp; ++q) t.port_state_i[q] = m.port_state_all_o[q];
      s.ps_ver = ps_ver_;
      s.in_dirty = true;
    }
  }

  // The crossbar inputs of a port, idle.
  template <class X>
  static void clear_xbar_inputs(X& x) {
    for (unsigned i = 0; i < kNp; ++i) {
      swt::put_bit(x.ov_req_i, i, false);
      swt::put_bit(x.od_req_i, i, false);
    }
    x.v_sel_i = 0;
    x.d_sel_i = 0;
    x.ov_tvalid_i = 0;
    x.od_tvalid_i = 0;
    x.ov_tlast_i = 0;
    x.od_tlast_i = 0;
  }

  // Port 0's view of the tiles' states changed: a new port_state_all_o for
  // the tiles (after every evaluation of port 0).
  void sync_states() {
    if (state_changed_) {
      state_changed_ = false;
      ++ps_ver_;
    }
  }

  // A tile's outputs that port 0 and the outputs read, after every
  // evaluation of it.
  void after_tile(unsigned p) {
    MgmtM& m = *mgmt_;
    const TileM& t = *tiles_[p];
    if (m.tile_state_i[p - 1] != t.state_o) {
      m.tile_state_i[p - 1] = t.state_o;
      state_changed_ = true;
    }
    swt::put_bit(m.tile_state_chg_i, p - 1, t.state_chg_o);
    swt::put_bit(m.tile_busy_i, p - 1, t.busy_o);
    for (unsigned k = 0; k < 2; ++k) {
      swt::put_bit(m.tile_lft_req_i, 2 * (p - 1) + k, swt::bit(t.lft_req_o, k));
      m.tile_lft_lid_i[2 * (p - 1) + k] = t.lft_lid_o[k];
    }
    requests_of(p, t, st_[p].v_out, st_[p].d_out);
  }

  // The register bus reaches the tile port 0 names (all of them for
  // CTR_CLEAR); a tile that held it last cycle sees it idle again, as every
  // tile but the addressed one does on ib_switch_top's shared bus. A tile
  // the bus reaches is marked, so it is evaluated and clocked in this cycle:
  // a write to an idle tile (its PortState, a clear, in simulation a
  // counter) lands, as the tile's clock gate opens for it (wake_o).
  void route_reg_bus() {
    MgmtM& m = *mgmt_;
    const unsigned tgt = m.reg_port_o;
    const bool all = m.reg_bcast_o;
    for (unsigned p = 1; p <= n_; ++p) {
      Tile& s = st_[p];
      TileM& t = *tiles_[p];
      const bool on = all || p == tgt;
      if (on) {
        t.reg_we_i = m.reg_we_i;
        t.reg_addr_i = m.reg_addr_i;
        t.reg_wdata_i = m.reg_wdata_i;
        s.reg_bus = true;
        mark(p);
      } else if (s.reg_bus) {
        t.reg_we_i = 0;
        t.reg_addr_i = 0;
        s.reg_bus = false;
        mark(p);
      }
    }
  }

  // A request bit of output q changed: its arbiter acts at the next edge.
  template <class F>
  void for_output(int q, F&& f) {
    if (q == 0) {
      f(*mgmt_);
    } else {
      f(*tiles_[q]);
      mark(q);
      st_[q].run = true;
    }
  }

  // Input i's requests (one-hot by egress) become bit i of the egress's
  // ov_req_i / od_req_i; a request that moved or ended is cleared.
  template <class X>
  void requests_of(unsigned i, const X& in, int& v_prev, int& d_prev) {
    const int v_now = requested_output(in.v_reqv_o);
    const int d_now = requested_output(in.d_reqv_o);
    if (v_now != v_prev) {
      if (v_prev >= 0) for_output(v_prev, [&](auto& o) { swt::put_bit(o.ov_req_i, i, false); });
      if (v_now >= 0) for_output(v_now, [&](auto& o) { swt::put_bit(o.ov_req_i, i, true); });
      v_prev = v_now;
    }
    if (d_now != d_prev) {
      if (d_prev >= 0) for_output(d_prev, [&](auto& o) { swt::put_bit(o.od_req_i, i, false); });
      if (d_now >= 0) for_output(d_now, [&](auto& o) { swt::put_bit(o.od_req_i, i, true); });
      d_prev = d_now;
    }
  }

  // A locked output receives its granted input's head.
  template <class O>
  void head_to(O& o) {
    if (o.ov_locked_o && o.ov_grant_o <= n_) {
      const unsigned g = o.ov_grant_o;
      if (g == 0) copy_vhead(o, *mgmt_);
      else copy_vhead(o, *tiles_[g]);
    }
    if (o.od_locked_o && o.od_grant_o <= n_) {
      const unsigned g = o.od_grant_o;
      if (g == 0) copy_dhead(o, *mgmt_, 0);
      else copy_dhead(o, *tiles_[g], tiles_[g]->d_vcrc_o);
    }
  }
  template <class O, class I>
  static void copy_vhead(O& o, const I& in) {
    o.ov_tdata_i = in.v_tdata_o;
    o.ov_tkeep_i = in.v_tkeep_o;
    o.ov_tvalid_i = in.v_tvalid_o;
    o.ov_tlast_i = in.v_tlast_o;
  }
  template <class O, class I>
  static void copy_dhead(O& o, const I& in, uint16_t vcrc) {
    o.od_tdata_i = in.d_tdata_o;
    o.od_tkeep_i = in.d_tkeep_o;
    o.od_tvalid_i = in.d_tvalid_o;
    o.od_tlast_i = in.d_tlast_o;
    if constexpr (std::is_same_v<O, MgmtM>) o.od_vcrc_i = vcrc;
  }

  void xbar_heads() {
    head_to(*mgmt_);
    for (const unsigned q : cand_) {  // a locked output is busy: a candidate
      TileM& o = *tiles_[q];
      if (o.ov_locked_o || o.od_locked_o) {
        head_to(o);
        st_[q].in_dirty = true;
      }
    }
  }

  // Input i takes its head beat when bit i of its egress's grant-ready
  // vector is set.
  template <class X>
  void select_of(unsigned i, X& in, int v_out, int d_out) {
    bool vs = false, ds = false;
    if (v_out == 0) vs = swt::bit(mgmt_->ov_gnt_rdy_o, i);
    else if (v_out > 0) vs = swt::bit(tiles_[v_out]->ov_gnt_rdy_o, i);
    if (d_out == 0) ds = swt::bit(mgmt_->od_gnt_rdy_o, i);
    else if (d_out > 0) ds = swt::bit(tiles_[d_out]->od_gnt_rdy_o, i);
    in.v_sel_i = vs;
    in.d_sel_i = ds;
  }

  void xbar_selects() {
    MgmtM& m = *mgmt_;
    const bool mvs0 = m.v_sel_i, mds0 = m.d_sel_i;
    select_of(0, m, m_v_out_, m_d_out_);
    if (m.v_sel_i != mvs0 || m.d_sel_i != mds0) m_in_dirty_ = true;
    for (const unsigned p : cand_) {  // a requesting input is busy: a candidate
      Tile& s = st_[p];
      TileM& t = *tiles_[p];
      const bool vs0 = t.v_sel_i, ds0 = t.d_sel_i;
      select_of(p, t, s.v_out, s.d_out);
      if (t.v_sel_i != vs0 || t.d_sel_i != ds0) {
        s.run = true;
        s.in_dirty = true;
      }
    }
  }

  void lft_to_tiles() {
    const MgmtM& m = *mgmt_;
    for (const unsigned p : cand_) {  // a tile that looks up is busy: a candidate
      Tile& s = st_[p];
      TileM& t = *tiles_[p];
      uint8_t g = 0, r = 0;
      for (unsigned k = 0; k < 2; ++k) {
        g |= swt::bit(m.tile_lft_gnt_o, 2 * (p - 1) + k) << k;
        r |= swt::bit(m.tile_lft_rsp_o, 2 * (p - 1) + k) << k;
      }
      if (g != t.lft_gnt_i || r != t.lft_rsp_i) {
        t.lft_gnt_i = g;
        t.lft_rsp_i = r;
        s.run = true;
        s.in_dirty = true;
      }
      if (r && t.lft_entry_i != m.lft_entry_o) {
        t.lft_entry_i = m.lft_entry_o;
        s.in_dirty = true;
      }
    }
  }

  unsigned n_;
  std::unique_ptr<MgmtM> mgmt_;
  std::vector<std::unique_ptr<TileM>> tiles_;  // [1..n_]
  std::vector<Tile> st_;
  std::vector<Wire> wire_;
  std::vector<unsigned> cand_;  // tiles that may change in this cycle
  std::vector<unsigned> touched_;       // tiles evaluated since take_touched()
  std::vector<uint8_t> touched_flag_;  // [p]: p is in touched_
  // The register bus as port 0 last decoded it.
  uint8_t bus_we_ = 0xFF;
  uint16_t bus_addr_ = 0;
  uint32_t bus_wdata_ = 0;
  int m_v_out_ = -1, m_d_out_ = -1;  // port 0's requested outputs
  uint8_t n_run_ = 0;
  uint32_t ps_ver_ = 1;
  bool state_changed_ = true;
  // An input of port 0's model was written since its last eval().
  bool m_in_dirty_ = true;
};

}  // namespace vl15

// dev_shim.cpp: DevModel for each Verilated multiport top. The Verilator user
// hooks (vl_fatal, vl_finish) live in ca_shim.cpp; the host machinery (context,
// clock, reset, FST, error policy) in model_host.h.
//
// Packed per-port vectors: port p (1..N) sits at index p-1, e.g.
// rx_tdata_i[(p-1)*DataW +: DataW]; ib_switch_top's port_state_o has port 0 at
// [3:0] and port p at [4p +: 4], ib_ca_mp_top's port p at [4(p-1) +: 4].
#include "dev_shim.h"

#include <array>
#include <stdexcept>
#include <string>

#include "model_host.h"
#include "vl15-bindings/src/dev.rs.h"

#include "Vcamp1.h"
#include "Vcamp2.h"
#include "Vsw8.h"
#ifdef VL15_HAVE_VSW36
#include "Vsw36.h"
#endif

namespace vl15 {
namespace {

using Data = std::array<uint64_t, 2>;

template <class T>
inline void put_beat(T& v, unsigned idx, unsigned w, const Data& d) {
  const unsigned lsb = idx * w;
  set_bits(v, lsb, w < 64 ? w : 64, d[0]);
  if (w > 64) set_bits(v, lsb + 64, w - 64, d[1]);
}
template <class T>
inline Data get_beat(const T& v, unsigned idx, unsigned w) {
  const unsigned lsb = idx * w;
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

// Model M: DataW W, N external ports; Switch = ib_switch_top (port 0 state in
// port_state_o, PortStateChange, port 0's GMP streams, no per-port data-VL
// host ports, no port tags), else ib_ca_mp_top.
template <class M, unsigned W, unsigned N, bool Switch>
class DevModelImpl final : public DevModel {
  static constexpr unsigned B = W / 8;
  static constexpr uint64_t KeepMask = (uint64_t{1} << B) - 1;

 public:
  DevModelImpl() {
    host_.settle([&](M& m) { idle_inputs(m); });
  }

  void reset(uint32_t cycles) override {
    host_.reset(cycles, [&](M& m) { idle_inputs(m); });
  }

  DevOut step(const DevIn& in, rust::Slice<const PortIn> ports_in,
              rust::Slice<PortOut> ports_out) override {
    if (ports_in.size() != N || ports_out.size() != N) {
      throw std::invalid_argument("step: expected " + std::to_string(N) + " ports, got " +
                                  std::to_string(ports_in.size()) + " in / " +
                                  std::to_string(ports_out.size()) + " out");
    }
    const PortIn* pi = ports_in.data();
    PortOut* po = ports_out.data();
    DevOut o{};
    host_.step([&](M& m) { apply(m, in, pi); }, [&](const M& m) { read(m, o, po); });
    return o;
  }

  void skip(uint64_t n) override { host_.skip(n); }
  uint64_t cycle() const override { return host_.cycle(); }
  uint32_t num_ports() const override { return N; }
  uint32_t data_w() const override { return W; }
  void trace_open(rust::Str path) override { host_.trace_open(std::string(path)); }
  void trace_close() override { host_.trace_close(); }

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
      if constexpr (!Switch) {
        put_beat(m.dtx_tdata_i, k, W, p[k].dtx_tdata);
        set_bits(m.dtx_tkeep_i, k * B, B, p[k].dtx_tkeep & KeepMask);
        set_bits(m.dtx_tvalid_i, k, 1, p[k].dtx_tvalid);
        set_bits(m.dtx_tlast_i, k, 1, p[k].dtx_tlast);
      }
    }
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

  void read(const M& m, DevOut& o, PortOut* p) const {
    for (unsigned k = 0; k < N; ++k) {
      p[k].tx_tdata = get_beat(m.tx_tdata_o, k, W);
      p[k].tx_tkeep = static_cast<uint16_t>(get_bits(m.tx_tkeep_o, k * B, B));
      p[k].tx_tvalid = get_bits(m.tx_tvalid_o, k, 1);
      p[k].tx_tlast = get_bits(m.tx_tlast_o, k, 1);
      p[k].port_state = static_cast<uint8_t>(get_bits(m.port_state_o, 4 * (Switch ? k + 1 : k), 4));
      if constexpr (!Switch) {
        p[k].drx_tdata = get_beat(m.drx_tdata_o, k, W);
        p[k].drx_tkeep = static_cast<uint16_t>(get_bits(m.drx_tkeep_o, k * B, B));
        p[k].drx_tvalid = get_bits(m.drx_tvalid_o, k, 1);
        p[k].drx_tlast = get_bits(m.drx_tlast_o, k, 1);
        p[k].drx_tuser = get_bits(m.drx_tuser_o, k, 1);
        p[k].drx_reason = static_cast<uint8_t>(get_bits(m.drx_reason_o, k * 3, 3));
        p[k].dtx_tready = get_bits(m.dtx_tready_o, k, 1);
        p[k].mkey_prot = static_cast<uint8_t>(get_bits(m.mkey_prot_o, 2 * k, 2));
        p[k].mkey_viols = static_cast<uint16_t>(get_bits(m.mkey_viols_o, 16 * k, 16));
      } else {
        p[k].drx_tdata = Data{0, 0};
        p[k].drx_tkeep = 0;
        p[k].drx_tvalid = false;
        p[k].drx_tlast = false;
        p[k].drx_tuser = false;
        p[k].drx_reason = 0;
        p[k].dtx_tready = false;
        p[k].mkey_prot = 0;
        p[k].mkey_viols = 0;
      }
    }
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

  ModelHost<M> host_;
};

}  // namespace

std::unique_ptr<DevModel> new_dev_model(DevKind kind) {
  switch (kind) {
    case DevKind::Switch8:
      return std::unique_ptr<DevModel>(new DevModelImpl<Vsw8, 64, 8, true>());
    case DevKind::Switch36:
#ifdef VL15_HAVE_VSW36
      return std::unique_ptr<DevModel>(new DevModelImpl<Vsw36, 64, 36, true>());
#else
      throw std::invalid_argument(
          "the 36-port switch model is not built: build vl15 with --features vl15/sw36 "
          "(make bench does)");
#endif
    case DevKind::CaMp1:
      return std::unique_ptr<DevModel>(new DevModelImpl<Vcamp1, 64, 1, false>());
    case DevKind::CaMp2:
      return std::unique_ptr<DevModel>(new DevModelImpl<Vcamp2, 64, 2, false>());
    default:
      throw std::invalid_argument("unknown device kind " + std::to_string(static_cast<int>(kind)));
  }
}

}  // namespace vl15

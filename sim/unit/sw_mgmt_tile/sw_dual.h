// SwDual: ib_switch_top Verilated as one model (the reference), with the
// same switch built from separately Verilated tiles (sim/sw_tiles.h:
// sw_mgmt_tile and sw_port_tile at MaxPorts 64) beside it. Every eval()
// copies the inputs the harness gave the reference into the composition and
// evaluates both; at every clock-low evaluation, when the harness samples,
// every output of the composition must equal the reference's (data while
// valid: unreset data registers start with different random values in the
// two). The harness sees the reference's outputs.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <type_traits>

#include "Vib_switch_top.h"
#include "Vsw_mgmt_tile.h"
#include "Vsw_port_tile.h"
#include "sw_tiles.h"
#include "tb_util.h"

// The tiles are patched by sim/ico_skip.sh (configs: --ico-skip).
thread_local bool vl15_ico_unchanged = false;

struct SwDual : Vib_switch_top {
  using Tiles = vl15::SwTiles<Vsw_mgmt_tile, Vsw_port_tile, DATAW>;

  SwDual() : tiles(new Tiles(Verilated::threadContextp(), NPORTS)) {}

  void eval() {
    Vib_switch_top::eval();
    copy_inputs();
    if (clk_i && !last_clk_) {
      tiles->posedge();
    } else {
      tiles->settle();
      if (!clk_i) compare();
    }
    last_clk_ = clk_i;
  }

  uint64_t cycles_compared = 0;
  std::unique_ptr<Tiles> tiles;

 private:
  static constexpr int B = DATAW / 8;

  // W bits of a packed per-port vector at port index k (byte offset k*B).
  template <class D, class S>
  static void slice(D& dst, const S& src, int k) {
    std::memset(static_cast<void*>(&dst), 0, sizeof dst);
    std::memcpy(static_cast<void*>(&dst), reinterpret_cast<const uint8_t*>(&src) + k * B, B);
  }
  template <class S>
  static uint32_t bits(const S& src, int lsb, int n) {
    uint32_t v = 0;
    const uint8_t* b = reinterpret_cast<const uint8_t*>(&src);
    for (int i = 0; i < n; i++) v |= uint32_t((b[(lsb + i) / 8] >> ((lsb + i) % 8)) & 1) << i;
    return v;
  }
  template <class A, class C>
  static bool eq_bytes(const A& a, const C& c, int n) {
    return std::memcmp(&a, &c, n) == 0;
  }

  void copy_inputs() {
    tiles->set_reset(rst_ni);
    for (int p = 1; p <= NPORTS; p++) {
      std::remove_reference_t<decltype(Vsw_port_tile::rx_tdata_i)> d;
      slice(d, rx_tdata_i, p - 1);
      tiles->set_port(p, d, bits(rx_tkeep_i, (p - 1) * B, B), bits(rx_tvalid_i, p - 1, 1),
                      bits(rx_tlast_i, p - 1, 1), bits(tx_tready_i, p - 1, 1),
                      bits(link_up_i, p - 1, 1));
    }
    Vsw_mgmt_tile& m = tiles->mgmt();
    m.sma_rx_tready_i = sma_rx_tready_i;
    m.sm_rx_tready_i = sm_rx_tready_i;
    m.sma_tx_tdata_i = sma_tx_tdata_i;
    m.sma_tx_tvalid_i = sma_tx_tvalid_i;
    m.sma_tx_tlast_i = sma_tx_tlast_i;
    m.sma_tx_slid_i = sma_tx_slid_i;
    m.sma_tx_dlid_i = sma_tx_dlid_i;
    m.sma_tx_sl_i = sma_tx_sl_i;
    m.sm_tx_tdata_i = sm_tx_tdata_i;
    m.sm_tx_tvalid_i = sm_tx_tvalid_i;
    m.sm_tx_tlast_i = sm_tx_tlast_i;
    m.sm_tx_dlid_i = sm_tx_dlid_i;
    m.sm_tx_sl_i = sm_tx_sl_i;
    m.sm_tx_path_bits_i = sm_tx_path_bits_i;
    m.trap_tx_tdata_i = trap_tx_tdata_i;
    m.trap_tx_tvalid_i = trap_tx_tvalid_i;
    m.trap_tx_tlast_i = trap_tx_tlast_i;
    m.gmp_tx_tdata_i = gmp_tx_tdata_i;
    m.gmp_tx_tkeep_i = gmp_tx_tkeep_i;
    m.gmp_tx_tvalid_i = gmp_tx_tvalid_i;
    m.gmp_tx_tlast_i = gmp_tx_tlast_i;
    m.reg_we_i = reg_we_i;
    m.reg_addr_i = reg_addr_i;
    m.reg_wdata_i = reg_wdata_i;
  }

  void compare() {
    if (!rst_ni) return;
    const Vsw_mgmt_tile& m = tiles->mgmt();
    const uint64_t c = cycles_compared++;
    for (int p = 1; p <= NPORTS; p++) {
      const Vsw_port_tile& t = tiles->tile(p);
      const bool v = bits(tx_tvalid_o, p - 1, 1);
      CHECK(t.tx_tvalid_o == v, "cycle %llu: port %d tx_tvalid %d (reference %d)",
            (unsigned long long)c, p, int(t.tx_tvalid_o), int(v));
      if (v && t.tx_tvalid_o) {
        const uint32_t keep = bits(tx_tkeep_o, (p - 1) * B, B);
        std::remove_cvref_t<decltype(t.tx_tdata_o)> d;
        slice(d, tx_tdata_o, p - 1);
        uint8_t a[16] = {}, b[16] = {};
        std::memcpy(a, &d, B);
        std::memcpy(b, &t.tx_tdata_o, B);
        for (int j = 0; j < B; j++) {
          if (!((keep >> j) & 1)) a[j] = b[j] = 0;
        }
        CHECK(t.tx_tkeep_o == keep && std::memcmp(a, b, B) == 0 &&
                  t.tx_tlast_o == bits(tx_tlast_o, p - 1, 1),
              "cycle %llu: port %d tx beat differs", (unsigned long long)c, p);
      }
    }
    CHECK(m.sma_rx_tvalid_o == sma_rx_tvalid_o, "cycle %llu: sma_rx_tvalid", (unsigned long long)c);
    if (sma_rx_tvalid_o) {
      CHECK(eq_bytes(m.sma_rx_tdata_o, sma_rx_tdata_o, B) && m.sma_rx_tlast_o == sma_rx_tlast_o &&
                m.sma_rx_slid_o == sma_rx_slid_o && m.sma_rx_dlid_o == sma_rx_dlid_o &&
                m.sma_rx_sl_o == sma_rx_sl_o && m.sma_rx_port_o == sma_rx_port_o &&
                m.sma_rx_mgmt_class_o == sma_rx_mgmt_class_o &&
                m.sma_rx_hop_ptr_o == sma_rx_hop_ptr_o && m.sma_rx_hop_cnt_o == sma_rx_hop_cnt_o &&
                (!sma_rx_tlast_o || (m.sma_rx_mkey_viol_o == sma_rx_mkey_viol_o &&
                                     m.sma_rx_mkey_mask_o == sma_rx_mkey_mask_o)),
            "cycle %llu: sma_rx beat differs", (unsigned long long)c);
    }
    CHECK(m.sm_rx_tvalid_o == sm_rx_tvalid_o, "cycle %llu: sm_rx_tvalid", (unsigned long long)c);
    if (sm_rx_tvalid_o) {
      CHECK(eq_bytes(m.sm_rx_tdata_o, sm_rx_tdata_o, B) && m.sm_rx_tlast_o == sm_rx_tlast_o &&
                m.sm_rx_slid_o == sm_rx_slid_o && m.sm_rx_dlid_o == sm_rx_dlid_o &&
                m.sm_rx_sl_o == sm_rx_sl_o && m.sm_rx_port_o == sm_rx_port_o &&
                m.sm_rx_mgmt_class_o == sm_rx_mgmt_class_o &&
                m.sm_rx_hop_ptr_o == sm_rx_hop_ptr_o && m.sm_rx_hop_cnt_o == sm_rx_hop_cnt_o,
            "cycle %llu: sm_rx beat differs", (unsigned long long)c);
    }
    CHECK(m.gmp_rx_tvalid_o == gmp_rx_tvalid_o, "cycle %llu: gmp_rx_tvalid", (unsigned long long)c);
    if (gmp_rx_tvalid_o) {
      const int n = popcount(gmp_rx_tkeep_o);
      CHECK(m.gmp_rx_tkeep_o == gmp_rx_tkeep_o && eq_bytes(m.gmp_rx_tdata_o, gmp_rx_tdata_o, n) &&
                m.gmp_rx_tlast_o == gmp_rx_tlast_o &&
                (!gmp_rx_tlast_o || (m.gmp_rx_tuser_o == gmp_rx_tuser_o &&
                                     m.gmp_rx_reason_o == gmp_rx_reason_o)),
            "cycle %llu: gmp_rx beat differs", (unsigned long long)c);
    }
    CHECK(m.sma_tx_tready_o == sma_tx_tready_o && m.sm_tx_tready_o == sm_tx_tready_o &&
              m.trap_tx_tready_o == trap_tx_tready_o && m.gmp_tx_tready_o == gmp_tx_tready_o,
          "cycle %llu: a host-side tready differs", (unsigned long long)c);
    CHECK(m.reg_rdata_o == reg_rdata_o, "cycle %llu: reg_rdata at %04x: %08x (reference %08x)",
          (unsigned long long)c, unsigned(reg_addr_i), unsigned(m.reg_rdata_o), unsigned(reg_rdata_o));
    for (int p = 0; p <= NPORTS; p++) {
      CHECK(bits(m.port_state_o, 4 * p, 4) == bits(port_state_o, 4 * p, 4),
            "cycle %llu: port %d state %u (reference %u)", (unsigned long long)c, p,
            bits(m.port_state_o, 4 * p, 4), bits(port_state_o, 4 * p, 4));
    }
    CHECK(m.port_state_change_o == port_state_change_o && m.mkey_prot_o == mkey_prot_o &&
              m.mkey_viols_o == mkey_viols_o,
          "cycle %llu: PortStateChange / M_Key status differs", (unsigned long long)c);
    CHECK(m.idle_o == idle_o, "cycle %llu: idle %d (reference %d)", (unsigned long long)c,
          int(m.idle_o), int(idle_o));
  }
  bool last_clk_ = false;
};

#define SW_TOP_T SwDual

// ca_bench.cpp: pure C++ Verilator harness for the simulation-speed
// comparison of `make bench` (the reference the cxx path is measured against).
// Same ib_ca_top, same Verilator flags (sim/verilator.flags) and the same -O3
// single-unit compile as bindings/build.rs; same cycle as CaModel::step in
// sim/ca_shim.cpp (inputs while clk is low, eval, read outputs, rising edge,
// eval). Workload, identical to tb/src/run/bench.rs: the 290-byte vector V1 back
// to back on wire RX (one beat per cycle, no gap), every ready high, the TX
// sources idle, the register bus idle.
//
// Build: sim/bench/run.sh (compiled with -DDATAW=<w> -DVM_PREFIX=Vca<w>).
// Usage: ca_bench <vector.bin> <cycles>
// Output: cycles=<n> seconds=<s> cps=<cycles/s>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "verilated.h"

#ifndef DATAW
#error "DATAW must be defined (32, 64 or 128)"
#endif

#define VL15_STR2(x) #x
#define VL15_STR(x) VL15_STR2(x)
#define VL15_HDR(p) VL15_STR(p.h)
#include VL15_HDR(VM_PREFIX)

namespace {

constexpr unsigned DataB = DATAW / 8;

struct Beat {
  uint64_t data[2];
  uint16_t keep;
  bool last;
};

template <class T>
inline void put_data(T& dst, const uint64_t* v) {
  dst = static_cast<T>(v[0]);
}
inline void put_data(VlWide<4>& dst, const uint64_t* v) {
  dst[0] = static_cast<uint32_t>(v[0]);
  dst[1] = static_cast<uint32_t>(v[0] >> 32);
  dst[2] = static_cast<uint32_t>(v[1]);
  dst[3] = static_cast<uint32_t>(v[1] >> 32);
}

}  // namespace

// Read by the model, patched by sim/ico_skip.sh as bindings/build.rs patches
// it: set around an eval() whose only changed input is the clock.
thread_local bool vl15_ico_unchanged = false;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <vector.bin> <cycles>\n", argv[0]);
    return 2;
  }
  std::ifstream f(argv[1], std::ios::binary);
  const std::vector<uint8_t> pkt((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const uint64_t cycles = std::strtoull(argv[2], nullptr, 10);
  if (pkt.empty() || cycles == 0) {
    std::fprintf(stderr, "ca_bench: empty vector %s or zero cycles\n", argv[1]);
    return 2;
  }

  // The packet as beats: full beats, the last one keep = 2^n - 1.
  std::vector<Beat> beats;
  for (size_t off = 0; off < pkt.size(); off += DataB) {
    Beat b{{0, 0}, 0, false};
    const size_t n = pkt.size() - off < DataB ? pkt.size() - off : DataB;
    for (size_t j = 0; j < n; ++j) b.data[j / 8] |= static_cast<uint64_t>(pkt[off + j]) << (8 * (j % 8));
    b.keep = static_cast<uint16_t>((1u << n) - 1);
    b.last = off + DataB >= pkt.size();
    beats.push_back(b);
  }

  std::unique_ptr<VerilatedContext> ctx(new VerilatedContext);
  ctx->randReset(2);  // as CaModel: random initial values, seed 1
  ctx->randSeed(1);
  ctx->threads(1);  // single-threaded model: no idle worker thread
  std::unique_ptr<VM_PREFIX> m(new VM_PREFIX(ctx.get(), "TOP"));
  // Every input 0 (--x-initial unique randomises them at construction); the
  // TX sources and the register bus stay idle for the whole run.
  const uint64_t zero[2] = {0, 0};
  m->clk_i = 0;
  m->rst_ni = 0;
  put_data(m->rx_tdata_i, zero);
  m->rx_tkeep_i = 0;
  m->rx_tvalid_i = 0;
  m->rx_tlast_i = 0;
  m->tx_tready_i = 0;
  put_data(m->dtx_tdata_i, zero);
  m->dtx_tkeep_i = 0;
  m->dtx_tvalid_i = 0;
  m->dtx_tlast_i = 0;
  m->sma_rx_tready_i = 0;
  m->sm_rx_tready_i = 0;
  m->sm_rq_post_i = 0;  // no SM receive WQEs: the workload has no MAD for the SM
  m->sm_rq_post_n_i = 0;
  m->sm_rq_clr_i = 0;
  put_data(m->sma_tx_tdata_i, zero);
  m->sma_tx_tvalid_i = 0;
  m->sma_tx_tlast_i = 0;
  m->sma_tx_slid_i = 0;
  m->sma_tx_dlid_i = 0;
  m->sma_tx_sl_i = 0;
  put_data(m->sm_tx_tdata_i, zero);
  m->sm_tx_tvalid_i = 0;
  m->sm_tx_tlast_i = 0;
  m->sm_tx_dlid_i = 0;
  m->sm_tx_sl_i = 0;
  m->sm_tx_path_bits_i = 0;
  put_data(m->trap_tx_tdata_i, zero);
  m->trap_tx_tvalid_i = 0;
  m->trap_tx_tlast_i = 0;
  m->reg_we_i = 0;
  m->reg_addr_i = 0;
  m->reg_wdata_i = 0;
  m->eval();
  for (int k = 0; k < 4; ++k) {  // reset, as the Rust side does (reset(4))
    m->clk_i = 0;
    m->eval();
    m->clk_i = 1;
    m->eval();
  }
  m->tx_tready_i = 1;
  m->link_up_i = 1;  // the link is trained: PortState Init, SMPs accepted
  m->sma_rx_tready_i = 1;
  m->sm_rx_tready_i = 1;

  uint64_t sink = 0;
  size_t bi = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t c = 0; c < cycles; ++c) {
    const Beat& b = beats[bi];
    bi = bi + 1 == beats.size() ? 0 : bi + 1;
    m->clk_i = 0;
    m->rst_ni = 1;
    put_data(m->rx_tdata_i, b.data);
    m->rx_tkeep_i = b.keep;
    m->rx_tvalid_i = 1;
    m->rx_tlast_i = b.last;
    m->eval();
    sink += m->sma_rx_tvalid_o;  // read an output, as the Rust side does
    m->clk_i = 1;
    vl15_ico_unchanged = true;  // only the clock changed (sim/ico_skip.sh)
    m->eval();
    vl15_ico_unchanged = false;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m->final();
  std::printf("cycles=%llu seconds=%.6f cps=%.0f\n", static_cast<unsigned long long>(cycles), s,
              static_cast<double>(cycles) / s);
  std::fprintf(stderr, "ca_bench: DataW=%d sma_rx_tvalid cycles=%llu\n", DATAW,
               static_cast<unsigned long long>(sink));
  return 0;
}

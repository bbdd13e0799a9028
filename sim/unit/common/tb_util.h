// Shared helpers for the vl15 unit harnesses (C++17, Verilator 5).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "verilated.h"
#if VM_COVERAGE
#include <unistd.h>

#include "verilated_cov.h"
#endif

#ifndef DATAW
#error "DATAW must be defined (-CFLAGS -DDATAW=..)"
#endif
static constexpr int kDataB = DATAW / 8;

// Verilator 5.048's default context runs one thread per core and starts a
// worker thread for it. The models here are single-threaded, and harnesses
// fork children to watch an assertion fire: a child has only the forking
// thread, and the exit after the assertion would wait forever for the
// worker it does not have. One thread, before any model exists.
static const bool g_one_thread = [] {
  Verilated::threadContextp()->threads(1);
  return true;
}();

// A coverage build (sim/unit/run.sh with UNIT_COVERAGE=1, which sets
// VL15_COVERAGE_DIR and VL15_COVERAGE_RUN): every model's counts go to
// $VL15_COVERAGE_DIR/$VL15_COVERAGE_RUN.<pid>.dat. Verilator reads the
// counters from the models, so a harness calls this before it deletes
// them; the first call writes, later ones do nothing.
static void tb_coverage_write() {
#if VM_COVERAGE
  static bool done = false;
  const char* dir = std::getenv("VL15_COVERAGE_DIR");
  if (done || !dir || !*dir) return;
  done = true;
  const char* run = std::getenv("VL15_COVERAGE_RUN");
  const std::string path = std::string(dir) + "/" + (run && *run ? run : "unit") + "." +
                           std::to_string(static_cast<long>(getpid())) + ".dat";
  Verilated::threadContextp()->coveragep()->write(path.c_str());
#endif
}

using Bytes = std::vector<uint8_t>;

static int g_errors = 0;
#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);            \
      std::fprintf(stderr, __VA_ARGS__);                                   \
      std::fprintf(stderr, "\n");                                          \
      if (++g_errors > 20) { std::fflush(nullptr); std::_Exit(1); }                                 \
    }                                                                      \
  } while (0)

// Copy n bytes into / out of a Verilator port of any width (CData, SData,
// IData, QData or VlWide: all little-endian in memory on the hosts we use).
template <typename T>
static void put_bytes(T& sig, const uint8_t* b, size_t n) {
  std::memset(static_cast<void*>(&sig), 0, sizeof(T));
  std::memcpy(static_cast<void*>(&sig), b, n < sizeof(T) ? n : sizeof(T));
}
template <typename T>
static void get_bytes(const T& sig, uint8_t* b, size_t n) {
  std::memcpy(b, static_cast<const void*>(&sig), n < sizeof(T) ? n : sizeof(T));
}

// tkeep value with the low n bits set.
static inline uint32_t keep_mask(int n) { return n >= 32 ? 0xFFFFFFFFu : ((1u << n) - 1u); }
static inline int popcount(uint32_t v) { return __builtin_popcount(v); }

// VCRC: CRC-16, poly 0x100B reflected (0xD008), init 0xFFFF, xorout 0xFFFF.
static uint16_t crc16(const uint8_t* p, size_t n) {
  uint16_t c = 0xFFFF;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xD008 : (c >> 1);
  }
  return c ^ 0xFFFF;
}

// Replace the last two bytes of a wire packet by its VCRC (LSB first).
static void fix_vcrc(Bytes& p) {
  uint16_t v = crc16(p.data(), p.size() - 2);
  p[p.size() - 2] = v & 0xFF;
  p[p.size() - 1] = v >> 8;
}

static Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    // _Exit, not exit: static destruction would destroy the model after the
    // Verilator context and hang (Verilator 5.006).
    std::fflush(nullptr);
    std::_Exit(2);
  }
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

static std::vector<Bytes> read_vectors(const std::string& root) {
  static const char* names[] = {"V1_dr_get_nodeinfo.bin", "V2_dr_getresp_nodeinfo.bin",
                                "V3_qp1_vl0.bin", "V4_qp1_vl3.bin"};
  std::vector<Bytes> v;
  for (const char* n : names) v.push_back(read_file(root + "/tests/vectors/" + n));
  return v;
}

static std::mt19937_64& rng() {
  static std::mt19937_64 r(0x5EED0000ull + DATAW);
  return r;
}
static inline uint32_t urand(uint32_t n) { return n ? static_cast<uint32_t>(rng()() % n) : 0; }
static inline bool chance(uint32_t pct) { return urand(100) < pct; }

// Digest of what a harness observed at the model's outputs, cycle by cycle
// (FNV-1a, 64 bits). Builds of one harness that must behave the same (a
// clock-gated and a free-running build) must end with the same digest:
// run.sh compares the configurations listed in the harness's `equiv` file.
// Only values that mean something are added (data while valid), so the
// random initial values of unreset registers (--x-initial unique) do not
// enter it.
struct Digest {
  uint64_t h = 0xcbf29ce484222325ull;
  bool used = false;
  void add(const void* p, size_t n) {
    used = true;
    const uint8_t* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  }
  void add_u64(uint64_t v) { add(&v, sizeof v); }
};
static Digest g_digest;

// One beat of a MAD stream (SMA/SM RX: full beats, no tkeep) into the
// digest: valid, and while valid the data, tlast and the sideband `meta`.
template <typename T>
static void digest_mad_beat(bool v, const T& data, bool last, uint64_t meta) {
  g_digest.add_u64(v);
  if (v) {
    uint8_t o[16] = {};
    std::memcpy(o, &data, kDataB < int(sizeof data) ? kDataB : sizeof data);
    g_digest.add(o, sizeof o);
    g_digest.add_u64(last);
    g_digest.add_u64(meta);
  }
}

// The sidebands of a top's SMA RX and SM RX streams (the CA's and the
// switch's tops name them alike), folded into one word each; the M_Key
// verdict counts only with tlast.
template <typename M>
static uint64_t sma_rx_meta(const M& m) {
  return (uint64_t(m.sma_rx_slid_o) << 48) ^ (uint64_t(m.sma_rx_dlid_o) << 32) ^
         (uint64_t(m.sma_rx_port_o) << 24) ^ (uint64_t(m.sma_rx_hop_ptr_o) << 16) ^
         (uint64_t(m.sma_rx_hop_cnt_o) << 8) ^ m.sma_rx_sl_o ^ (uint64_t(m.sma_rx_mgmt_class_o) << 4) ^
         (uint64_t(m.sma_rx_tlast_o ? m.sma_rx_mkey_viol_o * 2 + m.sma_rx_mkey_mask_o : 0) << 56);
}
template <typename M>
static uint64_t sm_rx_meta(const M& m) {
  return (uint64_t(m.sm_rx_slid_o) << 48) ^ (uint64_t(m.sm_rx_dlid_o) << 32) ^
         (uint64_t(m.sm_rx_port_o) << 24) ^ (uint64_t(m.sm_rx_hop_ptr_o) << 16) ^
         (uint64_t(m.sm_rx_hop_cnt_o) << 8) ^ m.sm_rx_sl_o ^ (uint64_t(m.sm_rx_mgmt_class_o) << 4);
}

static int finish(const char* name) {
  if (g_digest.used) {
    std::printf("%s DataW=%d: output digest %016llx\n", name, DATAW,
                static_cast<unsigned long long>(g_digest.h));
    if (FILE* f = std::fopen("digest", "w")) {
      std::fprintf(f, "%016llx\n", static_cast<unsigned long long>(g_digest.h));
      std::fclose(f);
    }
  }
  if (g_errors) {
    std::fprintf(stderr, "%s DataW=%d: %d FAILURES\n", name, DATAW, g_errors);
    return 1;
  }
  std::printf("%s DataW=%d: PASS\n", name, DATAW);
  return 0;
}

// Unit harness for ib_pkg's CRC steps (through crc_step_tb): the table
// form (what simulation evaluates) for every byte count n = 0..31 and the
// matrix form (what synthesis builds) for the counts of kMat, against a byte-serial reflected
// CRC written here from the polynomials (CRC-32 0xEDB88320, CRC-16 0xD008,
// ibspec §3), from any state, no final XOR. Bytes at or above n must not
// matter: they are random too. Random states and data, plus the all-zero
// and all-ones corners.
#include <cstdint>
#include <memory>

#include "Vcrc_step_tb.h"
#include "tb_util.h"
#include "verilated.h"

static constexpr unsigned kMaxBytes = 32;
// MatBytes of crc_step_tb.sv
static constexpr unsigned kMat[] = {0, 1, 2, 3, 4, 5, 8, 12, 16, 28};

static uint32_t ref32(uint32_t c, const uint8_t* d, unsigned n) {
  for (unsigned j = 0; j < n; ++j) {
    c ^= d[j];
    for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
  }
  return c;
}

static uint16_t ref16(uint16_t c, const uint8_t* d, unsigned n) {
  for (unsigned j = 0; j < n; ++j) {
    c ^= d[j];
    for (int i = 0; i < 8; ++i) c = (c & 1) ? static_cast<uint16_t>((c >> 1) ^ 0xD008u) : c >> 1;
  }
  return c;
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  auto top = std::make_unique<Vcrc_step_tb>();
  long checked = 0;
  uint8_t d[kMaxBytes];
  for (int t = 0; t < 20000 && g_errors < 10; ++t) {
    const uint8_t fill = t == 0 ? 0x00 : 0xFF;
    for (unsigned j = 0; j < kMaxBytes; ++j) d[j] = t < 2 ? fill : static_cast<uint8_t>(urand(256));
    const uint32_t s32 = t == 0 ? 0 : t == 1 ? 0xFFFFFFFFu : static_cast<uint32_t>(rng()());
    const uint16_t s16 = static_cast<uint16_t>(s32 >> (t & 8 ? 16 : 0));
    top->s32_i = s32;
    top->s16_i = s16;
    put_bytes(top->d_i, d, kMaxBytes);
    top->eval();
    for (unsigned n = 0; n < kMaxBytes; ++n) {
      const uint32_t e32 = ref32(s32, d, n);
      const uint16_t e16 = ref16(s16, d, n);
      CHECK(top->tab32_o[n] == e32, "CRC-32 table form, n=%u state %08x: %08x, expected %08x", n,
            s32, top->tab32_o[n], e32);
      CHECK(top->tab16_o[n] == e16, "CRC-16 table form, n=%u state %04x: %04x, expected %04x", n,
            s16, top->tab16_o[n], e16);
      checked += 2;
    }
    for (unsigned k = 0; k < sizeof kMat / sizeof kMat[0]; ++k) {
      const unsigned n = kMat[k];
      const uint32_t e32 = ref32(s32, d, n);
      const uint16_t e16 = ref16(s16, d, n);
      CHECK(top->xor32_o[k] == e32, "CRC-32 matrix form, n=%u state %08x: %08x, expected %08x", n,
            s32, top->xor32_o[k], e32);
      CHECK(top->xor16_o[k] == e16, "CRC-16 matrix form, n=%u state %04x: %04x, expected %04x", n,
            s16, top->xor16_o[k], e16);
      checked += 2;
    }
  }
  std::printf("crc_step: %ld steps checked\n", checked);
  top->final();
  return finish("crc_step");
}

// Unit harness for sw_mgmt_tile and sw_port_tile composed by the host
// (sim/sw_tiles.h), the fast path of the fabric's switches: the whole
// ib_switch_top harness (sim/unit/ib_switch_top/tb.cpp, with its own
// expected values) runs on ib_switch_top Verilated as one model, and the
// composition of separately Verilated tiles runs beside it on the same
// inputs, compared output by output in every cycle (sw_dual.h).
#include "sw_dual.h"

#include "../ib_switch_top/tb.cpp"

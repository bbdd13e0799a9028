// Precompiled header for the unit harnesses (sim/unit/run.sh compiles it once
// per run and force-includes it into every model and tb.cpp): the Verilator
// runtime header and the standard headers the harnesses use. Nothing here may
// depend on per-configuration macros (DATAW, ...). A stale or mismatching
// precompiled header is ignored by g++ (-Winvalid-pch says so in the log).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "verilated.h"

# Extra rules for sim/unit/run.sh, read after a Verilator-generated <prefix>.mk:
#   make -f V<top>.mk -f unit.mk <goal> [UNIT_RT_OBJS=...] [OPT_FAST=...] ...
# so that every flag comes from Verilator's own verilated.mk.
#
# unit_sig   prints what the runtime objects depend on (runtime file list and
#            the VM_* switches); run.sh reuses its prebuilt runtime only for a
#            model whose signature matches the one it was built for
# unit_rt    compiles the runtime objects (verilated.o, ...) in this directory
# unit_pch   precompiles unit_pch.h (copied into this directory) at $(OPT_FAST)
# unit_tb    links the harness ./unit_tb from tb.o, the model (one unity
#            __ALL.o when run with VM_PARALLEL_BUILDS=0, as run.sh does) and
#            the prebuilt runtime objects UNIT_RT_OBJS, instead of compiling
#            the runtime again as the generated link rule would

.PHONY: unit_sig unit_rt unit_pch

unit_sig:
	@echo 'global=$(strip $(VM_GLOBAL_FAST) $(VM_GLOBAL_SLOW)) coverage=$(VM_COVERAGE) sc=$(VM_SC) trace=$(VM_TRACE) fst=$(VM_TRACE_FST) vcd=$(VM_TRACE_VCD) timing=$(VM_TIMING)'

unit_rt: $(VK_GLOBAL_OBJS)

unit_pch: unit_pch.h.gch

unit_pch.h.gch: unit_pch.h
	$(CXX) $(CXXFLAGS) $(CPPFLAGS) $(OPT_FAST) -x c++-header -o $@ $<

unit_tb: $(VK_USER_OBJS) $(VK_OBJS)
	$(LINK) $(LDFLAGS) $^ $(UNIT_RT_OBJS) $(LOADLIBES) $(LDLIBS) $(LIBS) -o $@

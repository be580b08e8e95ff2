//! Links the `streamform` binary as a position-dependent executable on Linux: its start
//! then applies no relocations. As a position-independent one, the dynamic loader rewrote
//! about 114,000 addresses (DataFusion's tables among them) on every start, which tripled
//! the time `streamform --version` takes (docs/performance.md, "Start-up").
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

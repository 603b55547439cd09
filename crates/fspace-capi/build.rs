//! Gives libfspace.so its SONAME, so that programs linked against it load
//! `libfspace.so.0` (the ABI version) at run time.

fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libfspace.so.{major}");
}

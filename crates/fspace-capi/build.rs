//! Gives libfspace.so its SONAME, so that programs linked against it load
//! `libfspace.so.0` (the ABI version) at run time; and marks the tests of
//! filesystems that are not mounted as ignored (`fspace_test_kit::build`).

fn main() {
    fspace_test_kit::build::emit();
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libfspace.so.{major}");
}

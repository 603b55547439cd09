//! Names the preload library in its SONAME (`libfspace-preload.so`, as it
//! is installed), so that tools that read the name from the file (ldd,
//! lintian, dpkg-shlibdeps) see the installed one, not cargo's
//! `libfspace_preload.so`.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libfspace-preload.so");
}

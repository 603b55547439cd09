//! The committed `include/fspace.h` is what cbindgen generates from the
//! sources. `FSPACE_BLESS=1 cargo test -p fspace-capi --test header`
//! rewrites it.

use std::path::Path;

#[test]
fn committed_header_is_generated() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("read cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = crate_dir.join("include/fspace.h");
    if std::env::var_os("FSPACE_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write include/fspace.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/fspace.h differs from what cbindgen generates from the sources; \
         run `FSPACE_BLESS=1 cargo test -p fspace-capi --test header` and commit it"
    );
}

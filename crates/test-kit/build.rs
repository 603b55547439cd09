//! Compiles the matrix's build-time signature into the test kit, which
//! checks it against the run-time environment (see `src/build.rs`).

#[path = "src/build.rs"]
#[allow(dead_code)]
mod build;

fn main() {
    build::emit();
}

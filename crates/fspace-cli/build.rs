//! Marks the integration tests of filesystems that are not mounted as
//! ignored (`fspace_test_kit::build`).

fn main() {
    fspace_test_kit::build::emit();
}

//! Chainable setters for the option structs. The structs are
//! `#[non_exhaustive]` so that a new option is not a breaking change
//! (docs/api.md); callers outside the crate build them from `Default` and
//! either set fields or chain these:
//! `GrowOptions::default().intent(Intent::Log).sync(true)`.

/// Generates, for each listed field, `pub fn field(self, value) -> Self`.
macro_rules! setters {
    ($ty:ident $(<$lt:lifetime>)? { $($field:ident: $t:ty),* $(,)? }) => {
        impl$(<$lt>)? $ty$(<$lt>)? {
            $(
                #[doc = concat!(
                    "Sets [`", stringify!($field), "`](Self::", stringify!($field),
                    ") and returns the options."
                )]
                #[must_use]
                pub fn $field(mut self, value: $t) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}
